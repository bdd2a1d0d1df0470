/**
 * The console's HTML shell. It carries no data: the script fetches everything with the operator's
 * key. Asset and API locations are built from the page's route (shared/http/routeTemplate.ts
 * `routeUrlPath`), never from the path a request came in on.
 */
/** Escapes a value for a double-quoted HTML attribute. */
export function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export interface PageLinks {
  /** e.g. `/api/console/assets/console-3F2A.js` */
  readonly script: string;
  readonly style: string;
  /** The API root, e.g. `/api`. */
  readonly apiBase: string;
}

/** The HTML shell both pages share: one script and one stylesheet of their own, no inline code (the CSP allows none). */
export function htmlShell(page: { title: string; script: string; style: string; meta?: string; body: string }): string {
  const attr = escapeAttribute;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${page.meta ?? ''}<title>${page.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${attr(page.style)}">
<script type="module" src="${attr(page.script)}"></script>
</head>
<body>
${page.body}
</body>
</html>
`;
}

export function consolePage(links: PageLinks): string {
  return htmlShell({
    title: 'Tallyho console',
    script: links.script,
    style: links.style,
    meta: `<meta name="tallyho-api-base" content="${escapeAttribute(links.apiBase)}">\n`,
    body: '<div id="app"><noscript>The Tallyho console needs JavaScript.</noscript></div>',
  });
}
