/**
 * Just enough of ARM's expression language to read object-valued expressions that `bicep build`
 * emits, such as an app-settings union: `union(parameters('a'), createObject('K', 'v', 'K2', x))`.
 * `createObject` with literal keys becomes a plain object, `union` merges the objects it can see
 * (an argument known only at deploy time adds keys nobody can list here, so it is left out), and
 * anything else stays an `Expr` with its source text.
 */
import { Expr, isPlainObject, type Value } from './templateModel';

interface Node {
  readonly start: number;
  readonly end: number;
  readonly kind: 'string' | 'number' | 'call' | 'other';
  readonly value?: string;
  readonly name?: string;
  readonly args?: readonly Node[];
}

class Reader {
  private at = 0;

  constructor(private readonly text: string) {}

  private skip(): void {
    while (this.text[this.at] === ' ') this.at++;
  }

  parse(): Node {
    const node = this.expression();
    this.skip();
    if (this.at !== this.text.length) throw new Error(`unexpected text at ${this.at}`);
    return node;
  }

  private expression(): Node {
    this.skip();
    const start = this.at;
    let node: Node;
    if (this.text[this.at] === "'") node = this.string();
    else {
      const word = /^[A-Za-z_][\w.]*|^-?\d+/.exec(this.text.slice(this.at))?.[0];
      if (word === undefined) throw new Error(`unexpected ${this.text[this.at]} at ${this.at}`);
      this.at += word.length;
      if (this.text[this.at] === '(') {
        this.at++;
        const args: Node[] = [];
        this.skip();
        while (this.text[this.at] !== ')') {
          args.push(this.expression());
          this.skip();
          if (this.text[this.at] === ',') this.at++;
          else if (this.text[this.at] !== ')') throw new Error(`expected , or ) at ${this.at}`);
        }
        this.at++;
        node = { start, end: this.at, kind: 'call', name: word, args };
      } else node = { start, end: this.at, kind: /^-?\d/.test(word) ? 'number' : 'other', value: word };
    }
    // Member access and indexing keep the node opaque: its value is only known at deploy time.
    while (this.text[this.at] === '.' || this.text[this.at] === '[') {
      if (this.text[this.at] === '.') {
        this.at++;
        this.at += /^\w+/.exec(this.text.slice(this.at))?.[0].length ?? 0;
      } else {
        this.at++;
        this.expression();
        this.skip();
        this.at++;
      }
      node = { start, end: this.at, kind: 'other' };
    }
    return node;
  }

  private string(): Node {
    const start = this.at;
    let value = '';
    this.at++;
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined) throw new Error('unterminated string');
      this.at++;
      if (c !== "'") value += c;
      else if (this.text[this.at] === "'") {
        value += "'";
        this.at++;
      } else break;
    }
    return { start, end: this.at, kind: 'string', value };
  }
}

function evaluate(node: Node, text: string): Value {
  const source = (): Expr => new Expr(text.slice(node.start, node.end));
  if (node.kind === 'string') return node.value ?? '';
  if (node.kind === 'number') return Number(node.value);
  if (node.kind !== 'call' || node.args === undefined) return source();
  const args = node.args;
  if (node.name === 'createObject') {
    const result: Record<string, Value> = {};
    for (let i = 0; i + 1 < args.length; i += 2) {
      const key = evaluate(args[i]!, text);
      if (typeof key !== 'string') return source();
      result[key] = evaluate(args[i + 1]!, text);
    }
    return result;
  }
  if (node.name === 'union') {
    const known = args.map((arg) => evaluate(arg, text)).filter(isPlainObject);
    return known.length === 0 ? source() : (Object.assign({}, ...known) as Value);
  }
  return source();
}

/** The value of an ARM expression (without its brackets): an object where it builds one, else an Expr. */
export function armExpressionValue(text: string): Value {
  try {
    return evaluate(new Reader(text).parse(), text);
  } catch {
    return new Expr(text);
  }
}
