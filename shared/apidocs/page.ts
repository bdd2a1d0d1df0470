/**
 * The API reference page's HTML shell: Swagger UI (bundled from swagger-ui-dist at build time, served
 * by this app, so it works offline and behind a strict CSP) rendering the app's own OpenAPI document.
 */
import { escapeAttribute, htmlShell } from '../console/page';

export interface ApiDocsLinks {
  /** e.g. `/api/docs/assets/apidocs-3F2A.js` */
  readonly script: string;
  readonly style: string;
  /** e.g. `/api/openapi.json` */
  readonly document: string;
}

export function apiDocsPage(links: ApiDocsLinks): string {
  const document = escapeAttribute(links.document);
  return htmlShell({
    title: 'Tallyho API reference',
    script: links.script,
    style: links.style,
    body: `<div id="api-reference" data-document="${document}"><noscript>The API reference needs JavaScript; the document itself is at ${document}.</noscript></div>`,
  });
}
