import Backend
import VMHost

/// Every display string of the menu-group screens, in Chinese and English.
enum Strings {
    /// `MenuEditGroup.title` when creating a group.
    static let newGroupTitle = LocalizedText(zh: "新建分组", en: "New group")
    /// `MenuEditGroup.title` when renaming a group.
    static let renameGroupTitle = LocalizedText(zh: "重命名分组", en: "Rename group")
}
