// The Login view-model module.
import Runtime
