/**
 * The API reference page's HTML shell: Swagger UI (bundled from swagger-ui-dist at build time, served
 * by this app, so it works offline and behind a strict CSP) rendering the app's own OpenAPI document.
 */
import { escapeAttribute } from '../console/page';

export interface ApiDocsLinks {
  /** e.g. `/api/docs/assets/apidocs-3F2A.js` */
  readonly script: string;
  readonly style: string;
  /** e.g. `/api/openapi.json` */
  readonly document: string;
}

export function apiDocsPage(links: ApiDocsLinks): string {
  const attr = escapeAttribute;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tallyho API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${attr(links.style)}">
<script type="module" src="${attr(links.script)}"></script>
</head>
<body>
<div id="api-reference" data-document="${attr(links.document)}"><noscript>The API reference needs JavaScript; the document itself is at ${attr(links.document)}.</noscript></div>
</body>
</html>
`;
}
