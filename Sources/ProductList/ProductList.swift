// The ProductList view-model module.
import Runtime
