import Testing
@testable import EventualServer

@Suite("A store's refusal is answered with one status, chosen in HTTP/ErrorMapping")
struct RefusalMappingTests {
    @Test(arguments: [
        (Refusal.quotaExceeded("Quota reached"), 413, nil),
        (Refusal.limitReached("Usage events are limited", retryAfter: 90), 429, 90),
        (Refusal.limitReached("Usage events are limited", retryAfter: 0), 429, 1),
        (Refusal.notFound("no product with id p"), 404, nil),
        (Refusal.notTheOwner("only the user who created a product may delete it"), 403, nil),
        (Refusal.notPermitted("session token was issued for another barcode than this product's"), 403, nil),
        (Refusal.alreadyTaken("email is already registered"), 409, nil),
        (Refusal.invalid("Wrong or expired code"), 400, nil),
        (Refusal.overloaded("Too many sign-ins at once; retry in a moment", retryAfter: 2), 503, 2),
    ] as [(Refusal, Int, Int?)])
    func refusalIsAClientAnswerWithItsStatusAndMessage(_ refusal: Refusal, status: Int, retryAfter: Int?) {
        // When a store's refusal reaches the edge
        let outcome = ErrorMapping.outcome(for: refusal)
        // Then it is answered with its status and the store's own sentence, and is not logged as a server fault
        #expect(outcome.status.code == status)
        #expect(outcome.message == refusal.message)
        #expect(outcome.retryAfter == retryAfter)
        #expect(!outcome.isServerFault)
    }
}
