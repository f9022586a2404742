// The reference app's executable: the seed documents' kinds (product list, login, menu groups)
// served on stdio by the framework's server, with the backend chosen on the command line.
import AppComposition
import VMHost

Server(ReferenceApp.configuration).run()
