// The field reflection of the standard library: the stored properties of a class (its
// superclasses' first) with their names, offsets and types, read from the type once, where
// `Mirror` reads them again, demangling every field's type, for each instance.
@_spi(Reflection) import Swift
import VMHostEventLoop

/// Where the members of one kind sit in its instances: the stored properties whose type is a
/// member of the framework (a ``Command``, an ``Event``, ``Loads``…) or one of its property
/// wrappers (`@Input`, `@Output`, `@Derived`…), in declaration order, a superclass's first. Found
/// once per class, from its type; binding an instance then reads each member at its offset.
///
/// The member rules are checked here, once per class, and a kind that breaks one stops with a
/// message naming the kind and the member (a programmer's error, like a missing `static let kind`):
/// - a member is a stored property of its own type: `let retry = Command(…)`, `@Input var query = ""`;
/// - not `lazy` (a lazy member would be made when first used, after the view-model is bound, or
///   never), and not optional (a member set to nil, or replaced, after binding would be unbound);
/// - declared in the kind or in a superclass of it: both are bound, the superclass's first.
@HostActor
struct MemberLayout {
    /// One member's stored property.
    struct Slot {
        /// The member's name on the wire: the property's (a wrapper's storage without its `_`).
        let name: String
        /// Reads the member of an instance, given the instance's address.
        let read: (UnsafeRawPointer) -> any DeclaredMember
    }

    /// The members' properties, in declaration order.
    let slots: [Slot]
    /// How many property outputs, events (the `error` event included) and inputs an instance
    /// declared when it was bound: room made for as many in the next one.
    var declared: (properties: Int, events: Int, inputs: Int)?

    private static var byClass: [ObjectIdentifier: MemberLayout] = [:]

    /// The layout of `type`, found the first time it is asked for; stops with a message naming
    /// `kind` and the member when a member breaks a rule.
    static func of(_ type: AnyObject.Type, kind: String) -> MemberLayout {
        if let layout = byClass[ObjectIdentifier(type)] { return layout }
        let layout = MemberLayout(slots: slots(of: type, kind: kind), declared: nil)
        byClass[ObjectIdentifier(type)] = layout
        return layout
    }

    /// Records how many outputs, events and inputs an instance of `type` declared.
    static func record(_ type: AnyObject.Type, declared: (properties: Int, events: Int, inputs: Int)) {
        byClass[ObjectIdentifier(type)]?.declared = declared
    }

    /// The prefix of the storage the compiler makes for a `lazy var`.
    static let lazyPrefix = "$__lazy_storage_$_"

    private static func slots(of type: AnyObject.Type, kind: String) -> [Slot] {
        var slots: [Slot] = []
        var problem: String?
        // `.classType`, which the standard library declares as a `static var`.
        let classType = _EachFieldOptions(rawValue: 1 << 0)
        let complete = _forEachField(of: type, options: classType) { cName, offset, fieldType, _ in
            let field = String(cString: cName)
            if let wrapper = fieldType as? any DeclaredMemberWrapper.Type {
                // `@Output var page` is stored as `_page`.
                slots.append(Slot(name: field.hasPrefix("_") ? String(field.dropFirst()) : field, read: reader(of: wrapper, at: offset)))
            } else if let member = fieldType as? any DeclaredMember.Type {
                slots.append(Slot(name: field, read: reader(of: member, at: offset)))
            } else if let optional = fieldType as? any AnyOptional.Type, isMember(optional.wrappedType) {
                if field.hasPrefix(lazyPrefix) {
                    let name = field.dropFirst(lazyPrefix.count)
                    problem = "\(kind).\(name): a member must not be `lazy` (a lazy member is made when first used, after the "
                        + "view-model's members are named, or never): declare it `let \(name) = …`; its closure is handed the view-model"
                } else {
                    problem = "\(kind).\(field): a member must not be optional (\(fieldType)): one set to nil or replaced after the "
                        + "view-model is made would not be on the wire; declare it `let \(field) = …`"
                }
                return false
            }
            return true
        }
        if let problem { fatalError(problem) }
        if !complete { fatalError("\(kind): the stored properties of \(type) could not be read by reflection") }
        return slots
    }

    private static func isMember(_ type: Any.Type) -> Bool {
        type is any DeclaredMember.Type || type is any DeclaredMemberWrapper.Type
    }

    private static func reader<Member: DeclaredMember>(of type: Member.Type, at offset: Int) -> (UnsafeRawPointer) -> any DeclaredMember {
        { base in base.load(fromByteOffset: offset, as: Member.self) }
    }

    private static func reader<Wrapper: DeclaredMemberWrapper>(of type: Wrapper.Type, at offset: Int) -> (UnsafeRawPointer) -> any DeclaredMember {
        { base in base.load(fromByteOffset: offset, as: Wrapper.self).declaredMember }
    }
}

/// An optional, seen without its wrapped type: what a `lazy var` is stored as.
protocol AnyOptional {
    static var wrappedType: Any.Type { get }
}

extension Optional: AnyOptional {
    static var wrappedType: Any.Type { Wrapped.self }
}
