import EventualAPI
import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// `GET /dashboard`: the product team's web pages. A sign-in form (an Eventual account's email
/// and password), then one page per app with a chart per question over a date range, and each
/// chart's data as CSV. Only admins see them; everyone else gets a 403 page.
///
/// The session is an access token like the API's, in a cookie that scripts cannot read
/// (HttpOnly), that no other site's page sends (SameSite=Strict), and that travels only over
/// TLS when the dashboard is served over it (Secure: a request that arrived as https, or through
/// a proxy saying `X-Forwarded-Proto: https`).
struct DashboardRoutes: Sendable {
    static let cookieName = "eventual_dashboard"
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    let service: APIService
    let templates: MustacheLibrary

    init(service: APIService) throws {
        self.service = service
        self.templates = try DashboardTemplates.library()
    }

    /// The paths and methods, for the 405 answers of `ContractRoutes`.
    static let routes: [String: [HTTPRequest.Method]] = [
        "/dashboard": [.get], "/dashboard/sign-in": [.post], "/dashboard/sign-out": [.post],
        "/dashboard/{app}": [.get], "/dashboard/{app}/{file}": [.get],
    ]

    func register(on router: Router<ServerRequestContext>) {
        let routes = self
        router.get("dashboard") { request, _ in try await routes.home(request) }
        router.post("dashboard/sign-in") { request, context in try await routes.signIn(request, context: context) }
        router.post("dashboard/sign-out") { request, _ in try await routes.signOut(request) }
        router.get("dashboard/:app") { request, context in
            try await routes.appPage(request, app: context.parameters.get("app") ?? "")
        }
        router.get("dashboard/:app/:file") { request, context in
            try await routes.csv(request, app: context.parameters.get("app") ?? "", file: context.parameters.get("file") ?? "")
        }
    }

    // MARK: Pages

    private func home(_ request: Request) async throws -> Response {
        switch try await viewer(of: request) {
        case .admin: return redirect(to: "/dashboard/\(AnalyticsApp.sustainU.rawValue)")
        case .refused: return refusedPage()
        case .nobody: return page("sign-in", ["title": "Sign in"])
        }
    }

    private func signIn(_ request: Request, context: ServerRequestContext) async throws -> Response {
        var request = request
        let form = DashboardForm(try await request.collectBody(upTo: 16 * 1024))
        let email = form["email"] ?? "", password = form["password"] ?? ""
        func again(_ problem: String, status: HTTPResponse.Status) -> Response {
            page("sign-in", ["title": "Sign in", "problem": problem, "email": email], status: status)
        }
        guard !email.isEmpty, !password.isEmpty, TextRules.problem(in: email, .singleLine) == nil,
              TextRules.problem(in: password, .anythingButNUL) == nil
        else {
            return again("Enter your email and password.", status: .badRequest)
        }
        let now = UnixMillis.now()
        let standing: Throttle.LoginStanding
        do {
            standing = try await service.throttle.checkLogin(email: email, address: RequestScope.current?.clientAddress ?? "unknown", now: now)
        } catch let error as APIError {
            return again(error.message, status: error.status)
        }
        let user = try await service.accounts.user(email: email)
        guard try await service.passwords.verify(password, against: user?.passwordHash), let user else {
            try await service.throttle.recordLoginFailure(standing, now: now)
            return again("Wrong email or password.", status: .unauthorized)
        }
        try await service.throttle.recordLoginSuccess(standing)
        guard try await service.accounts.role(userID: user.id) == .admin else {
            // NB: no session for someone who may not see the dashboard.
            return refusedPage()
        }
        let token = AccessToken.generate()
        let expiresAt = now + Int64(AccessToken.lifetime * 1000)
        try await service.accounts.saveToken(hash: AccessToken.hash(token), userID: user.id, now: now, expiresAt: expiresAt)
        var response = redirect(to: "/dashboard/\(AnalyticsApp.sustainU.rawValue)")
        response.headers[.setCookie] = cookie(token, maxAge: Int(AccessToken.lifetime), request: request)
        return response
    }

    private func signOut(_ request: Request) async throws -> Response {
        if let token = Self.sessionToken(request) {
            try await service.accounts.revokeToken(hash: AccessToken.hash(token), at: UnixMillis.now())
        }
        var response = redirect(to: "/dashboard")
        response.headers[.setCookie] = cookie("", maxAge: 0, request: request)
        return response
    }

    private func appPage(_ request: Request, app name: String) async throws -> Response {
        let served = service.catalog.snapshot
        guard let app = served.app(name)?.app.id else { throw APIError.notFound("No dashboard page '\(name.prefix(40))'") }
        switch try await viewer(of: request) {
        case .nobody: return redirect(to: "/dashboard")
        case .refused: return refusedPage()
        case .admin: break
        }
        let apps: [[String: Any]] = served.apps.map { other in
            ["id": other.app.id.rawValue, "name": other.app.title, "current": other.app.id == app]
        }
        let title = served.app(name)?.app.title ?? name
        let range: AnalyticsRange
        do {
            range = try AnalyticsRange(from: Self.query(request, "from"), to: Self.query(request, "to"))
        } catch {
            // NB: a person typed these dates: the form again, with what is wrong, not an API's JSON.
            let typed = { (name: String) in String((Self.query(request, name) ?? "").prefix(10)) }
            return page("app", [
                "title": title, "app": app.rawValue, "apps": apps, "from": typed("from"), "to": typed("to"),
                "problem": Self.sentence(error.message), "questions": [[String: Any]](),
            ], status: .badRequest)
        }
        var questions: [[String: Any]] = []
        for question in AnalyticsQuestion.of(app) {
            let rows = try await service.analytics.answer(question, range: range)
            let columns = question.answerColumns
            let svg = SVGChart(question: question, columns: columns, rows: rows, axis: question.axis(range)).render()
            questions.append([
                "id": question.rawValue, "title": question.title, "svg": svg, "columns": columns, "rowCount": rows.count,
                "open": rows.count <= 8 && !rows.isEmpty,
                "csv": "/dashboard/\(app.rawValue)/\(question.rawValue).csv?from=\(range.from)&to=\(range.to)",
                "rows": rows.map { row in
                    ["cells": row.map { cell -> [String: Any] in ["text": cell.description, "number": cell.doubleValue != nil] }]
                },
            ])
        }
        return page("app", [
            "title": title, "app": app.rawValue, "apps": apps, "from": range.from, "to": range.to,
            "questions": questions,
        ])
    }

    private func csv(_ request: Request, app name: String, file: String) async throws -> Response {
        guard file.hasSuffix(".csv"), let question = AnalyticsQuestion(rawValue: String(file.dropLast(4))),
              question.app.rawValue == name
        else {
            throw APIError.notFound("No chart '\(file.prefix(60))' on the \(name.prefix(20)) page")
        }
        switch try await viewer(of: request) {
        case .nobody: return redirect(to: "/dashboard")
        case .refused: return refusedPage()
        case .admin: break
        }
        let range = try AnalyticsRange(from: Self.query(request, "from"), to: Self.query(request, "to"))
        let rows = try await service.analytics.answer(question, range: range)
        let text = DashboardCSV.render(columns: question.answerColumns, rows: rows)
        return Response(status: .ok, headers: [
            .contentType: "text/csv; charset=utf-8",
            .contentDisposition: "attachment; filename=\"\(question.rawValue)_\(range.from)_\(range.to).csv\"",
            .cacheControl: "no-store",
        ], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    // MARK: Who is asking

    private enum Viewer { case nobody, refused, admin }

    private func viewer(of request: Request) async throws -> Viewer {
        guard let token = Self.sessionToken(request),
              let record = try await service.lookupReads.token(hash: AccessToken.hash(token)), record.isValid(at: UnixMillis.now())
        else { return .nobody }
        return try await service.accounts.role(userID: record.userID) == .admin ? .admin : .refused
    }

    static func sessionToken(_ request: Request) -> String? {
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName {
                    let value = parts[1].trimmingCharacters(in: .whitespaces)
                    return value.isEmpty ? nil : value
                }
            }
        }
        return nil
    }

    private func cookie(_ value: String, maxAge: Int, request: Request) -> String {
        let secure = request.head.scheme?.lowercased() == "https" || request.headers[Self.forwardedProto]?.lowercased() == "https"
        return "\(Self.cookieName)=\(value); Path=/dashboard; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    // MARK: Answers

    private func page(_ template: String, _ context: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let html = templates.render(context, withTemplate: template) ?? "<!doctype html><title>Eventual analytics</title>"
        return Response(status: status, headers: [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
            .xContentTypeOptions: "nosniff",
        ], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    private func refusedPage() -> Response {
        page("refused", ["title": "Not for this account", "message": APIService.adminsOnly.message], status: .forbidden)
    }

    private func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
    }

    static func query(_ request: Request, _ name: String) -> String? {
        guard let value = request.uri.queryParameters.get(name), !value.isEmpty else { return nil }
        return value
    }

    /// An API message as a sentence for the page: capital first, full stop last.
    static func sentence(_ message: String) -> String {
        guard let first = message.first else { return message }
        return first.uppercased() + message.dropFirst() + (message.hasSuffix(".") ? "" : ".")
    }
}

extension HTTPField.Name {
    static let xContentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
}
