import VMHostWire

extension DomainError: JSONEncodable {
    public static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": [
                "kind": ["enum": .array(Kind.allCases.map { .string($0.rawValue) })],
                "code": ["type": ["integer", "string", "null"]],
                "message": ["type": "string"],
                "detail": ["type": "string"],
                "input": ["type": ["string", "null"]],
            ],
            "required": ["kind", "code", "message", "detail", "input"],
        ]
    }
}
