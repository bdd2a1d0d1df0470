/**
 * Route templates (ASP.NET style, as the Functions host reads them: `{id}`, `{id:int}`, `{id?}`,
 * `{*rest}`, `{id=5}`, `{x:regex(^a{{2}}$)}` with doubled braces inside) as OpenAPI path templates:
 * `/` plus the template with every parameter reduced to `{name}`.
 */
/** The prefix routes are served under: host.json `extensions.http.routePrefix` (a unit test holds the two together). */
export const routePrefix = 'api';

/**
 * The URL path of a route without parameters, e.g. `/api/console`. Links a page or an answer gives
 * are built with this, from the route, never from the path a request came in on: `GET
 * //evil.example/api/console` would otherwise have the page load its script from another origin.
 */
export function routeUrlPath(path: string): string {
  return `/${routePrefix}/${path}`;
}

interface Segment {
  readonly literal?: string;
  readonly parameter?: string;
}

function parse(template: string): Segment[] {
  const segments: Segment[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open === -1) {
      segments.push({ literal: template.slice(i) });
      break;
    }
    if (template[open + 1] === '{') {
      segments.push({ literal: template.slice(i, open + 1) });
      i = open + 2;
      continue;
    }
    segments.push({ literal: template.slice(i, open) });
    // Inside a parameter, `{{` and `}}` are literal braces of a constraint; a single `}` ends it.
    let end = open + 1;
    while (end < template.length) {
      const pair = template.slice(end, end + 2);
      if (pair === '{{' || pair === '}}') end += 2;
      else if (template[end] === '}') break;
      else end += 1;
    }
    if (end >= template.length) throw new Error(`Unclosed parameter in route template "${template}"`);
    const name = /^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)/.exec(template.slice(open + 1, end))?.[1];
    if (name === undefined) throw new Error(`A parameter without a name in route template "${template}"`);
    segments.push({ parameter: name });
    i = end + 1;
  }
  return segments;
}

export function openApiPath(template: string): string {
  const path = parse(template.replace(/^\/+/, ''))
    .map((s) => (s.parameter === undefined ? s.literal : `{${s.parameter}}`))
    .join('');
  return `/${path}`;
}

export function pathParameterNames(template: string): string[] {
  return parse(template).flatMap((s) => (s.parameter === undefined ? [] : [s.parameter]));
}
