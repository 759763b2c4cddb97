import Mustache

/// The dashboard's pages, as Mustache templates rendered on the server. Plain HTML and CSS: no
/// script, so there is nothing to build and nothing to break in an old browser.
enum DashboardTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        try library.register(layout, named: "layout")
        try library.register(signIn, named: "sign-in")
        try library.register(refused, named: "refused")
        try library.register(appPage, named: "app")
        return library
    }

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Eventual analytics</title>
        <style>
        body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1d2320; background: #f5f7f6; }
        header { background: #1f4d3a; color: #fff; padding: 12px 16px; display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
        header h1 { font-size: 18px; margin: 0; flex: 1 1 auto; }
        header a { color: #fff; }
        nav a { margin-right: 12px; }
        nav a[aria-current="page"] { font-weight: 700; text-decoration: none; border-bottom: 2px solid #fff; }
        main { max-width: 980px; margin: 0 auto; padding: 12px; }
        form.range { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; background: #fff; padding: 12px; border-radius: 8px; }
        form.range label { display: flex; flex-direction: column; font-size: 14px; }
        input, button { font: inherit; padding: 6px 8px; }
        button { background: #1f4d3a; color: #fff; border: 0; border-radius: 6px; cursor: pointer; }
        header button { background: transparent; border: 1px solid #fff; }
        section.question { background: #fff; border-radius: 8px; padding: 12px; margin: 12px 0; }
        section.question h2 { font-size: 17px; margin: 0 0 8px; }
        svg.chart { display: block; max-width: 100%; height: auto; font-size: 13px; }
        svg .axis, svg .legend { fill: #555; }
        svg .empty { fill: #777; font-size: 14px; }
        details { margin-top: 8px; }
        .table { overflow-x: auto; }
        table { border-collapse: collapse; font-size: 14px; }
        th, td { padding: 3px 8px; border-bottom: 1px solid #e2e6e4; text-align: left; white-space: nowrap; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        .signin { max-width: 360px; margin: 48px auto; background: #fff; padding: 20px; border-radius: 8px; }
        .signin label { display: block; margin: 8px 0; }
        .signin input { width: 100%; box-sizing: border-box; }
        .problem { color: #a8202f; }
        </style>
        </head>
        <body>
        {{$body}}{{/body}}
        </body>
        </html>
        """

    static let signIn = """
        {{<layout}}{{$body}}
        <main>
        <form class="signin" method="post" action="/dashboard/sign-in">
        <h1>Eventual analytics</h1>
        <p>For the product team: sign in with your Eventual account.</p>
        {{#problem}}<p class="problem" role="alert">{{problem}}</p>{{/problem}}
        <label>Email <input type="email" name="email" autocomplete="username" required value="{{email}}"></label>
        <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
        <button type="submit">Sign in</button>
        </form>
        </main>
        {{/body}}{{/layout}}
        """

    static let refused = """
        {{<layout}}{{$body}}
        <main>
        <div class="signin" id="refused">
        <h1>Not for this account</h1>
        <p>{{message}}</p>
        <form method="post" action="/dashboard/sign-out"><button type="submit">Sign in as someone else</button></form>
        </div>
        </main>
        {{/body}}{{/layout}}
        """

    static let appPage = """
        {{<layout}}{{$body}}
        <header>
        <h1>Eventual analytics</h1>
        <nav>{{#apps}}<a href="/dashboard/{{id}}?from={{from}}&amp;to={{to}}"{{#current}} aria-current="page"{{/current}}>{{name}}</a>{{/apps}}</nav>
        <form method="post" action="/dashboard/sign-out"><button type="submit">Sign out</button></form>
        </header>
        <main>
        <form class="range" method="get" action="/dashboard/{{app}}">
        <label>From <input type="date" name="from" value="{{from}}" required></label>
        <label>To <input type="date" name="to" value="{{to}}" required></label>
        <button type="submit">Show</button>
        </form>
        {{#problem}}<p class="problem" role="alert">{{problem}}</p>{{/problem}}
        {{#questions}}
        <section class="question" id="{{id}}" data-question="{{id}}" data-rows="{{rowCount}}">
        <h2>{{title}}</h2>
        {{{svg}}}
        <details{{#open}} open{{/open}}><summary>Data ({{rowCount}} rows) · <a href="{{csv}}" download>CSV</a></summary>
        <div class="table"><table>
        <thead><tr>{{#columns}}<th>{{.}}</th>{{/columns}}</tr></thead>
        <tbody>{{#rows}}<tr>{{#cells}}<td{{#number}} class="number"{{/number}}>{{text}}</td>{{/cells}}</tr>{{/rows}}</tbody>
        </table></div>
        </details>
        </section>
        {{/questions}}
        </main>
        {{/body}}{{/layout}}
        """
}
