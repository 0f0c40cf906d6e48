// The self-contained unsubscribe confirmation page: inline CSS, no scripts, identical for every token.
export const UNSUBSCRIBE_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'";

export const UNSUBSCRIBE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Secbox: notification emails turned off</title>
<style>
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f6f8fa;color:#1f2328}
main{max-width:520px;margin:12vh auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:32px}
h1{font-size:20px;margin:0 0 12px}p{line-height:1.5;margin:0 0 12px}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}main{background:#161b22;border-color:#30363d}}
</style></head>
<body><main>
<h1>Notification emails are off</h1>
<p>If this link belongs to a Secbox account, that account will no longer receive notification emails (tracker changes, responder summaries).</p>
<p>To turn them back on, sign in to Secbox and enable notifications in <strong>Settings</strong>.</p>
</main></body></html>
`;
