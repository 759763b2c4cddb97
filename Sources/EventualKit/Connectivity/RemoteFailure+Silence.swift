extension RemoteFailure {
    /// Whether the server was reached but sent no answer in time (a captive portal, a hung
    /// server), rather than not reached at all: what a person is told is "not answering", not
    /// "no connection".
    // NB: read from the sentences `RemoteFailure` words a transport failure with, as the failure
    // carries no other trace of it; a case of its own would say it once.
    public var isSilence: Bool {
        guard case .unreachable(let sentence) = self else { return false }
        return Self.isSilence(sentence)
    }

    /// Whether `sentence`, a failure's description, says the server did not answer in time.
    public static func isSilence(_ sentence: String) -> Bool {
        ["did not answer", "took too long to answer", "did not finish answering", "No answer from", "is not answering"]
            .contains { sentence.contains($0) }
    }
}

extension CacheError {
    /// Whether the copy could not be loaded because the server did not answer in time.
    public var serverIsSilent: Bool {
        switch self {
        case .needsConnectionForFirstLoad(_, let reason): RemoteFailure.isSilence(reason)
        }
    }
}
