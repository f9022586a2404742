// The MenuGroups view-model module.
import Runtime
