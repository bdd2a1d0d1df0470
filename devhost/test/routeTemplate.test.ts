import { compareTemplates, RouteTemplate } from '../http/routeTemplate';

type Row = [template: string, path: string, expected: Record<string, string> | null];

const table: Row[] = [
  // literals, case-insensitive
  ['items', 'items', {}],
  ['items', 'ITEMS', {}],
  ['items', 'items/', {}],
  ['items', 'item', null],
  ['items', 'items/1', null],
  ['a/b/c', 'A/b/C', {}],
  ['', '', {}],
  // plain parameters, percent-decoded
  ['items/{id}', 'items/42', { id: '42' }],
  ['items/{id}', 'items/hello%20world', { id: 'hello world' }],
  ['items/{id}', 'items', null],
  ['items/{id}', 'items/1/2', null],
  ['sequences/{name}/next', 'Sequences/ord-1/NEXT', { name: 'ord-1' }],
  // optional and defaults
  ['items/{id?}', 'items', {}],
  ['items/{id?}', 'items/7', { id: '7' }],
  ['items/{id=5}', 'items', { id: '5' }],
  ['items/{id=5}', 'items/9', { id: '9' }],
  ['items/{a?}/{b?}', 'items/1', { a: '1' }],
  ['items/{a?}/{b?}', 'items/1/2', { a: '1', b: '2' }],
  // catch-all
  ['files/{*rest}', 'files/a/b/c.txt', { rest: 'a/b/c.txt' }],
  ['files/{**rest}', 'files/a%2Fb/c', { rest: 'a/b/c' }],
  ['files/{*rest}', 'files', {}],
  ['files/{*rest=index}', 'files', { rest: 'index' }],
  // complex segments
  ['files/{name}.{ext}', 'files/report.pdf', { name: 'report', ext: 'pdf' }],
  ['files/{name}.{ext}', 'files/a.b.c', { name: 'a.b', ext: 'c' }],
  ['files/{name}.{ext?}', 'files/readme.', { name: 'readme' }],
  ['files/{name}.{ext}', 'files/readme', null],
  ['v{version:int}/ping', 'v2/ping', { version: '2' }],
  ['v{version:int}/ping', 'vx/ping', null],
  // int / long
  ['n/{id:int}', 'n/123', { id: '123' }],
  ['n/{id:int}', 'n/-5', { id: '-5' }],
  ['n/{id:int}', 'n/2147483647', { id: '2147483647' }],
  ['n/{id:int}', 'n/2147483648', null],
  ['n/{id:int}', 'n/12a', null],
  ['n/{id:int}', 'n/1.5', null],
  ['n/{id:int?}', 'n', {}],
  ['n/{id:long}', 'n/9223372036854775807', { id: '9223372036854775807' }],
  ['n/{id:long}', 'n/9223372036854775808', null],
  // bool, guid, alpha
  ['b/{v:bool}', 'b/TRUE', { v: 'TRUE' }],
  ['b/{v:bool}', 'b/false', { v: 'false' }],
  ['b/{v:bool}', 'b/yes', null],
  ['g/{v:guid}', 'g/3f2504e0-4f89-11d3-9a0c-0305e82c3301', { v: '3f2504e0-4f89-11d3-9a0c-0305e82c3301' }],
  ['g/{v:guid}', 'g/3f2504e04f8911d39a0c0305e82c3301', { v: '3f2504e04f8911d39a0c0305e82c3301' }],
  ['g/{v:guid}', 'g/%7B3f2504e0-4f89-11d3-9a0c-0305e82c3301%7D', { v: '{3f2504e0-4f89-11d3-9a0c-0305e82c3301}' }],
  ['g/{v:guid}', 'g/3f2504e0-4f89-11d3-9a0c', null],
  ['a/{v:alpha}', 'a/Hello', { v: 'Hello' }],
  ['a/{v:alpha}', 'a/hello1', null],
  // datetime, decimal, double, float
  ['d/{v:datetime}', 'd/2026-01-31', { v: '2026-01-31' }],
  ['d/{v:datetime}', 'd/2026-01-31T10:00:00Z', { v: '2026-01-31T10:00:00Z' }],
  ['d/{v:datetime}', 'd/tomorrow', null],
  ['d/{v:decimal}', 'd/12.50', { v: '12.50' }],
  ['d/{v:decimal}', 'd/1,000.5', { v: '1,000.5' }],
  ['d/{v:decimal}', 'd/1e5', null],
  ['d/{v:double}', 'd/1e5', { v: '1e5' }],
  ['d/{v:double}', 'd/-.5', { v: '-.5' }],
  ['d/{v:double}', 'd/abc', null],
  ['d/{v:float}', 'd/3.25', { v: '3.25' }],
  ['d/{v:float}', 'd/NaN', { v: 'NaN' }],
  // min / max / range
  ['m/{v:min(10)}', 'm/10', { v: '10' }],
  ['m/{v:min(10)}', 'm/9', null],
  ['m/{v:min(10)}', 'm/ten', null],
  ['m/{v:max(10)}', 'm/10', { v: '10' }],
  ['m/{v:max(10)}', 'm/11', null],
  ['m/{v:range(1,3)}', 'm/2', { v: '2' }],
  ['m/{v:range(1,3)}', 'm/4', null],
  ['m/{v:int:min(1)}', 'm/0', null],
  ['m/{v:int:min(1)}', 'm/1', { v: '1' }],
  // length / minlength / maxlength
  ['l/{v:length(3)}', 'l/abc', { v: 'abc' }],
  ['l/{v:length(3)}', 'l/ab', null],
  ['l/{v:length(2,4)}', 'l/abcd', { v: 'abcd' }],
  ['l/{v:length(2,4)}', 'l/abcde', null],
  ['l/{v:minlength(2)}', 'l/a', null],
  ['l/{v:minlength(2)}', 'l/ab', { v: 'ab' }],
  ['l/{v:maxlength(2)}', 'l/abc', null],
  ['l/{v:maxlength(2)}', 'l/ab', { v: 'ab' }],
  // regex (case-insensitive, escaped braces, a slash inside the pattern)
  ['r/{v:regex(^[a-z]{{2}}\\d+$)}', 'r/AB12', { v: 'AB12' }],
  ['r/{v:regex(^[a-z]{{2}}\\d+$)}', 'r/A12', null],
  ['r/{v:regex(^(x|y)$)}', 'r/y', { v: 'y' }],
  ['r/{v:regex(^(x|y)$)}', 'r/z', null],
];

describe('route templates', () => {
  test.each(table)('%s ~ %s', (template, path, expected) => {
    const match = new RouteTemplate(template).match(path);
    if (expected === null) expect(match).toBeUndefined();
    else expect(match?.params).toEqual(expected);
  });

  test.each([
    ['items/{id', /unclosed/],
    ['items/{id}/{id}', /twice/],
    ['files/{*rest}/more', /catch-all/],
    ['items/{id?}/more', /optional/],
    ['items/{id:nope}', /unknown constraint/],
    ['items/{id:range(5,1)}', /min above max/],
    ['items/{id:min(x)}', /integer argument/],
    ['items/{a}{b}', /separated by a literal/],
    ['items/{id:regex(()}', /unclosed|regular expression/],
  ])('rejects %s', (template, message) => {
    expect(() => new RouteTemplate(template)).toThrow(expect.objectContaining({ name: 'DevhostError', code: 'RouteTemplateInvalid' }));
    expect(() => new RouteTemplate(template)).toThrow(message);
  });

  test('the most specific template wins: literal, then constrained, then plain, then catch-all', () => {
    const templates = ['items/{*rest}', 'items/{id}', 'items/{id:int}', 'items/new', 'items/{name}.{ext}'].map((t) => new RouteTemplate(t));
    const ordered = [...templates].sort(compareTemplates).map((t) => t.template);
    expect(ordered).toEqual(['items/new', 'items/{name}.{ext}', 'items/{id:int}', 'items/{id}', 'items/{*rest}']);
  });
});
