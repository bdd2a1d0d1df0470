/**
 * The console's HTML shell. It carries no data: the script fetches everything with the operator's
 * key. Asset and API locations are derived from the URL the page was served at, so the page works
 * under any route prefix.
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

export function consolePage(links: PageLinks): string {
  const attr = escapeAttribute;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="tallyho-api-base" content="${attr(links.apiBase)}">
<title>Tallyho console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${attr(links.style)}">
<script type="module" src="${attr(links.script)}"></script>
</head>
<body>
<div id="app"><noscript>The Tallyho console needs JavaScript.</noscript></div>
</body>
</html>
`;
}
