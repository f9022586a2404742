import VMHost

extension ProductListViewModel {
    /// `vm.create {kind:"ProductList", args:{pageSize?}}`: products per page, 1…100, default 20.
    public struct Args: ViewModelArgs, Equatable {
        public static let pageSizes = 1...100
        public static let defaultPageSize = 20

        public var pageSize: Int

        public init(pageSize: Int = Args.defaultPageSize) {
            self.pageSize = pageSize
        }

        /// Reads the args; a bad `pageSize` (or an unknown member) fails naming it:
        /// `params.args.pageSize: must be between 1 and 100, got 0`.
        public init(reader: ObjectReader) throws(JSONDecodingError) {
            pageSize = try reader.optional("pageSize", .in(Self.pageSizes), default: Self.defaultPageSize)
        }
    }
}
