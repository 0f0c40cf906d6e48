// Renders an email body as plain text and as simple, self-contained HTML (inline styles only).
export interface EmailContent {
  heading: string;
  paragraphs: string[];
  /** Shown verbatim in a monospace block (diffs, error messages). */
  preformatted?: string;
  link?: { label: string; url: string };
  /** Small print at the bottom (e.g. the unsubscribe notice). */
  footer?: { text: string; link?: { label: string; url: string } };
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

export function renderEmail(c: EmailContent): { text: string; html: string } {
  const text = [
    c.heading,
    "",
    ...c.paragraphs.flatMap((p) => [p, ""]),
    ...(c.preformatted !== undefined ? [c.preformatted, ""] : []),
    ...(c.link ? [`${c.link.label}: ${c.link.url}`, ""] : []),
    ...(c.footer ? ["--", c.footer.text + (c.footer.link ? ` ${c.footer.link.url}` : "")] : []),
  ].join("\n");

  const p = (s: string) => `<p style="margin:0 0 12px">${escapeHtml(s)}</p>`;
  const a = (l: { label: string; url: string }) => `<a href="${escapeHtml(l.url)}" style="color:#1c55c4">${escapeHtml(l.label)}</a>`;
  const html = `<!doctype html><html><body style="margin:0;padding:24px;font-family:system-ui,-apple-system,Segoe UI,sans-serif;color:#1f2328;background:#f6f8fa">
<div style="max-width:640px;margin:0 auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:24px">
<h1 style="font-size:18px;margin:0 0 16px">${escapeHtml(c.heading)}</h1>
${c.paragraphs.map(p).join("\n")}
${c.preformatted !== undefined ? `<pre style="font-size:12px;background:#f6f8fa;border-radius:6px;padding:12px;overflow:auto;white-space:pre-wrap">${escapeHtml(c.preformatted)}</pre>` : ""}
${c.link ? `<p style="margin:16px 0">${a(c.link)}</p>` : ""}
${c.footer ? `<hr style="border:none;border-top:1px solid #d0d7de;margin:24px 0 12px"><p style="font-size:12px;color:#57606a;margin:0">${escapeHtml(c.footer.text)}${c.footer.link ? ` ${a(c.footer.link)}` : ""}</p>` : ""}
</div></body></html>`;
  return { text, html };
}
