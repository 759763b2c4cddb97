import EventualKit
import Foundation
import Testing

@Suite("A device's folders")
struct DeviceFoldersTests {
    private let folders = DeviceFolders(URL(fileURLWithPath: "/data/app"))

    @Test func aPersonsFolderIsUnderUsersAndNamedByTheirID() {
        #expect(folders.user("0b9f2c1e-7a").path == "/data/app/users/0b9f2c1e-7a")
        #expect(folders.secrets.path == "/data/app/secrets")
    }

    @Test func anIDFromTheServerCannotNameAnotherFolder() {
        // NB: the id is the server's word; a hostile or broken server must not reach outside `users/`.
        #expect(folders.user("../../etc").path == "/data/app/users/etc")
        #expect(folders.user("a/b\u{0}c").path == "/data/app/users/abc")
        #expect(folders.user("..").path == "/data/app/users/user")
        #expect(folders.user("").path == "/data/app/users/user")
    }
}
