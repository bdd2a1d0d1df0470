/**
 * A TemplateModel read straight from the Bicep sources with tree-sitter-bicep (WASM, no native
 * build, no Bicep CLI). It is a small evaluator, not a compiler: it follows variables, parameters,
 * `loadJsonContent`, `union` of known objects and local modules (with the arguments of the call),
 * and expands loops over lists it knows, so `main.bicep` yields the resources a deployment would
 * create. Anything computed at deploy time stays an `Expr` with its source text.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

import { Language, type Node, Parser } from 'web-tree-sitter';

import { Expr, isPlainObject, type OutputView, type ParamView, type ResourceView, type TemplateModel, type Value } from './templateModel';

let parser: Parser | undefined;

export async function bicepParser(): Promise<Parser> {
  if (parser !== undefined) return parser;
  await Parser.init();
  // Bytes, not a path: loading by path uses a dynamic import that jest's VM does not allow.
  const language = await Language.load(readFileSync(require.resolve('tree-sitter-bicep/tree-sitter-bicep.wasm')));
  parser = new Parser();
  parser.setLanguage(language);
  return parser;
}

export interface SyntaxError {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly text: string;
}

/** Syntax errors (ERROR and MISSING nodes) in one file. */
export function syntaxErrors(p: Parser, file: string): SyntaxError[] {
  const tree = p.parse(readFileSync(file, 'utf8'));
  if (tree === null) throw new Error(`tree-sitter could not parse ${file}`);
  const errors: SyntaxError[] = [];
  const visit = (node: Node): void => {
    if (node.isError || node.isMissing) {
      errors.push({ file, line: node.startPosition.row + 1, column: node.startPosition.column + 1, text: node.text.slice(0, 80) });
      return;
    }
    for (const child of node.children) if (child !== null) visit(child);
  };
  visit(tree.rootNode);
  return errors;
}

const named = (node: Node): Node[] => node.namedChildren.filter((c): c is Node => c !== null && c.type !== 'comment');

function render(value: Value): string {
  if (value instanceof Expr) return value.text;
  if (typeof value === 'string') return `'${value}'`;
  return JSON.stringify(value, (_k, v: unknown) => (v instanceof Expr ? v.text : v));
}

function unescape(sequence: string): string {
  const map: Record<string, string> = { "\\'": "'", '\\\\': '\\', '\\n': '\n', '\\r': '\r', '\\t': '\t', '\\$': '$' };
  return map[sequence] ?? sequence;
}

interface Declarations {
  /** Parameters and their default value, if any. */
  readonly params: Map<string, Node | undefined>;
  readonly vars: Map<string, Node>;
  readonly resources: Map<string, string>;
  readonly modules: Set<string>;
}

interface Collected {
  resources: ResourceView[];
  outputs: OutputView[];
  params: ParamView[];
  texts: { file: string; text: string }[];
}

class FileEvaluator {
  private readonly varCache = new Map<string, Value>();

  constructor(
    private readonly p: Parser,
    private readonly file: string,
    private readonly path: string,
    private readonly args: ReadonlyMap<string, Value>,
    /** Deployed only under a condition (the module call, or a parent's, has an `if`). */
    private readonly underCondition: boolean,
    private readonly decls: Declarations,
    private readonly out: Collected,
  ) {}

  evaluate(node: Node, env: ReadonlyMap<string, Value>): Value {
    switch (node.type) {
      case 'string':
        return this.string(node, env);
      case 'number':
        return Number(node.text);
      case 'boolean':
        return node.text === 'true';
      case 'null':
        return null;
      case 'object': {
        const result: Record<string, Value> = {};
        for (const property of named(node).filter((c) => c.type === 'object_property')) {
          const parts = named(property).filter((c) => c.type !== 'decorators');
          const key = parts[0];
          const value = parts[parts.length - 1];
          if (key === undefined || value === undefined || parts.length < 2) continue;
          const keyValue = key.type === 'string' ? this.string(key, env) : key.text;
          result[typeof keyValue === 'string' ? keyValue : render(keyValue)] = this.evaluate(value, env);
        }
        return result;
      }
      case 'array':
        return named(node).map((item) => this.evaluate(item, env));
      case 'parenthesized_expression': {
        const inner = named(node)[0];
        return inner === undefined ? new Expr(node.text) : this.evaluate(inner, env);
      }
      case 'identifier':
        return this.identifier(node.text, env);
      case 'member_expression': {
        const object = node.childForFieldName('object');
        const property = node.childForFieldName('property');
        if (object === null || property === null) return new Expr(node.text);
        const base = this.evaluate(object, env);
        if (isPlainObject(base) && property.text in base) return base[property.text] ?? null;
        return new Expr(`${render(base)}.${property.text}`);
      }
      case 'subscript_expression': {
        const object = node.childForFieldName('object');
        const index = node.childForFieldName('index');
        if (object === null || index === null) return new Expr(node.text);
        const base = this.evaluate(object, env);
        const key = this.evaluate(index, env);
        if (Array.isArray(base) && typeof key === 'number') return (base as readonly Value[])[key] ?? null;
        if (isPlainObject(base) && typeof key === 'string' && key in base) return base[key] ?? null;
        return new Expr(`${render(base)}[${render(key)}]`);
      }
      case 'call_expression':
        return this.call(node, env);
      default:
        return new Expr(node.text);
    }
  }

  private string(node: Node, env: ReadonlyMap<string, Value>): Value {
    let text = '';
    let literal = true;
    for (const child of node.children) {
      if (child === null) continue;
      if (child.type === 'string_content') text += child.text;
      else if (child.type === 'escape_sequence') text += unescape(child.text);
      else if (child.type === 'interpolation') {
        const inner = named(child)[0];
        const value = inner === undefined ? new Expr(child.text) : this.evaluate(inner, env);
        if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') text += String(value);
        else {
          literal = false;
          text += `\${${render(value)}}`;
        }
      }
    }
    return literal ? text : new Expr(`'${text}'`);
  }

  private identifier(name: string, env: ReadonlyMap<string, Value>): Value {
    const bound = env.get(name);
    if (bound !== undefined) return bound;
    const variable = this.decls.vars.get(name);
    if (variable !== undefined) {
      let value = this.varCache.get(name);
      if (value === undefined) {
        value = this.evaluate(variable, new Map());
        this.varCache.set(name, value);
      }
      return value;
    }
    if (this.decls.params.has(name)) return this.param(name);
    return new Expr(name);
  }

  param(name: string): Value {
    const given = this.args.get(name);
    if (given !== undefined) return given;
    const fallback = this.decls.params.get(name);
    return fallback === undefined ? new Expr(name) : this.evaluate(fallback, new Map());
  }

  private call(node: Node, env: ReadonlyMap<string, Value>): Value {
    const fn = node.childForFieldName('function')?.text ?? '';
    const argsNode = node.childForFieldName('arguments');
    const args = argsNode === null ? [] : named(argsNode).map((a) => this.evaluate(a, env));
    if (fn === 'loadJsonContent' && typeof args[0] === 'string') {
      const file = join(dirname(this.file), args[0]);
      const text = readFileSync(file, 'utf8');
      this.out.texts.push({ file, text });
      return JSON.parse(text) as Value;
    }
    if (fn === 'union' && args.every((a) => isPlainObject(a))) return Object.assign({}, ...args) as Value;
    if (fn === 'empty' && typeof args[0] === 'string') return args[0] === '';
    return new Expr(`${fn}(${args.map(render).join(', ')})`);
  }

  /** The statement's body and the loops/conditions around it. */
  private shape(statement: Node): { body: Node | undefined; loop: Node | undefined; conditional: boolean } {
    const parts = named(statement);
    let body = parts[parts.length - 1];
    let loop: Node | undefined;
    let conditional = false;
    if (body?.type === 'for_statement') {
      loop = body;
      body = body.childForFieldName('body') ?? undefined;
    }
    if (body?.type === 'if_statement') {
      conditional = true;
      body = named(body).find((c) => c.type === 'object');
    }
    return { body, loop, conditional };
  }

  /** The environments a loop produces: one per known item, or one with the items unknown. */
  private loopEnvs(loop: Node | undefined): { envs: Map<string, Value>[]; expanded: boolean } {
    if (loop === undefined) return { envs: [new Map()], expanded: true };
    const parameters = named(loop).find((c) => c.type === 'for_loop_parameters');
    const initializer = loop.childForFieldName('initializer');
    const names = parameters === undefined ? [initializer?.text ?? '_'] : named(parameters).map((c) => c.text);
    // Nodes are fresh objects on every access: compare ids, not references.
    const skip = new Set([loop.childForFieldName('body')?.id, parameters?.id, initializer?.id]);
    const source = named(loop).find((c) => !skip.has(c.id));
    const items = source === undefined ? new Expr('?') : this.evaluate(source, new Map());
    if (!Array.isArray(items)) {
      return { envs: [new Map(names.map((n) => [n, new Expr(n)] as const))], expanded: false };
    }
    const list = items as readonly Value[];
    return {
      envs: list.map((item, i) => {
        const env = new Map<string, Value>();
        if (names[0] !== undefined) env.set(names[0], item);
        if (names[1] !== undefined) env.set(names[1], i);
        return env;
      }),
      expanded: true,
    };
  }

  run(root: Node): void {
    for (const statement of named(root)) {
      if (statement.type === 'parameter_declaration') {
        const name = named(statement).find((c) => c.type === 'identifier')?.text ?? '?';
        this.out.params.push({
          path: this.path,
          name,
          defaultValue: this.decls.params.get(name) === undefined ? undefined : this.param(name),
        });
      } else if (statement.type === 'output_declaration') {
        const parts = named(statement);
        const value = parts[parts.length - 1];
        this.out.outputs.push({
          path: this.path,
          name: parts.find((c) => c.type === 'identifier')?.text ?? '?',
          value: value === undefined ? null : this.evaluate(value, new Map()),
        });
      } else if (statement.type === 'resource_declaration') {
        this.resource(statement);
      } else if (statement.type === 'module_declaration') {
        this.module(statement);
      }
    }
  }

  private resource(statement: Node): void {
    const parts = named(statement);
    const symbol = parts[0]?.text ?? '?';
    const typeText = parts[1] === undefined ? '' : this.evaluate(parts[1], new Map());
    const [type = '', apiVersion = ''] = (typeof typeText === 'string' ? typeText : '').split('@');
    const existing = statement.children.some((c) => c?.type === 'existing');
    const { body, loop, conditional } = this.shape(statement);
    const { envs, expanded } = this.loopEnvs(loop);
    for (const env of envs) {
      const value = body === undefined ? {} : this.evaluate(body, env);
      const bodyValue = isPlainObject(value) ? value : {};
      const scope = bodyValue.scope;
      const scopeType = scope instanceof Expr ? this.decls.resources.get(scope.text) : undefined;
      this.out.resources.push({
        path: this.path,
        symbol,
        type,
        apiVersion,
        existing,
        conditional: conditional || this.underCondition,
        loop: !expanded,
        scopeType,
        body: bodyValue,
      });
    }
  }

  private module(statement: Node): void {
    const parts = named(statement);
    const symbol = parts[0]?.text ?? '?';
    const target = parts[1] === undefined ? undefined : this.evaluate(parts[1], new Map());
    if (typeof target !== 'string' || target.includes(':')) throw new Error(`${this.file}: module ${symbol} is not a local file`);
    const { body, loop, conditional } = this.shape(statement);
    for (const env of this.loopEnvs(loop).envs) {
      const value = body === undefined ? {} : this.evaluate(body, env);
      const params = isPlainObject(value) && isPlainObject(value.params) ? value.params : {};
      const file = join(dirname(this.file), target);
      evaluateFile(this.p, file, `${this.path}/${symbol}`, new Map(Object.entries(params)), conditional || this.underCondition, this.out);
    }
  }
}

function declarations(root: Node): Declarations {
  const decls: Declarations = { params: new Map(), vars: new Map(), resources: new Map(), modules: new Set() };
  for (const statement of named(root)) {
    const parts = named(statement);
    const name = parts.find((c) => c.type === 'identifier')?.text;
    if (name === undefined) continue;
    if (statement.type === 'variable_declaration') {
      const value = parts[parts.length - 1];
      if (value !== undefined) decls.vars.set(name, value);
    } else if (statement.type === 'parameter_declaration') {
      // `param name type = default`: a default follows the type.
      const value = parts[parts.length - 1];
      decls.params.set(name, value !== undefined && value.type !== 'type' && value !== parts[0] ? value : undefined);
    } else if (statement.type === 'resource_declaration') {
      const typeNode = parts[1];
      decls.resources.set(name, typeNode?.text.replace(/^'|'$/g, '').split('@')[0] ?? '');
    } else if (statement.type === 'module_declaration') {
      decls.modules.add(name);
    }
  }
  return decls;
}

function evaluateFile(
  p: Parser,
  file: string,
  path: string,
  args: ReadonlyMap<string, Value>,
  underCondition: boolean,
  out: Collected,
): void {
  const text = readFileSync(file, 'utf8');
  out.texts.push({ file, text });
  const tree = p.parse(text);
  if (tree === null) throw new Error(`tree-sitter could not parse ${file}`);
  const decls = declarations(tree.rootNode);
  new FileEvaluator(p, file, path, args, underCondition, decls, out).run(tree.rootNode);
}

/** The model of `file` (normally infra/main.bicep) and every module it uses. */
export async function bicepModel(file: string, args: Readonly<Record<string, Value>> = {}): Promise<TemplateModel> {
  const p = await bicepParser();
  const out: Collected = { resources: [], outputs: [], params: [], texts: [] };
  const root =
    relative(process.cwd(), file)
      .replace(/\.bicep$/, '')
      .split('/')
      .pop() ?? 'main';
  evaluateFile(p, file, root, new Map(Object.entries(args)), false, out);
  return { source: 'bicep', ...out };
}
