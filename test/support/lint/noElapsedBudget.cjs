/**
 * ESLint rule `tallyho/no-elapsed-budget`: in tests, a difference of clock readings (`Date.now()` or
 * `performance.now()`, directly or through a variable holding one) compared with a constant — by a
 * relational operator or by an `expect(…)` matcher such as toBeLessThan — is an assertion on the
 * machine's speed, and a reading compared with a deadline (`const deadline = Date.now() + 20_000`)
 * is a wait with a budget of its own: both fail on a busy machine and pass on an idle one. Wait on a condition instead (test/support/waits.ts) and let jest's timeout be the net; a
 * figure worth knowing belongs in `npm run bench`. A comparison that cannot fail by slowness (a
 * lower bound: "not before its time") may be kept with an eslint-disable comment saying so.
 * CommonJS, so the lint config loads it and a unit test runs it with ESLint's RuleTester.
 */

const clockCalls = new Set(['Date.now', 'performance.now']);
const relational = new Set(['<', '<=', '>', '>=']);
const matchers = new Set(['toBeLessThan', 'toBeLessThanOrEqual', 'toBeGreaterThan', 'toBeGreaterThanOrEqual']);

/** `Date.now()` / `performance.now()`. */
function isClockRead(node) {
  if (node?.type !== 'CallExpression' || node.callee.type !== 'MemberExpression') return false;
  const { object, property } = node.callee;
  return object.type === 'Identifier' && property.type === 'Identifier' && clockCalls.has(`${object.name}.${property.name}`);
}

function findVariable(scope, name) {
  for (let s = scope; s !== null; s = s.upper) {
    const found = s.set.get(name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The initial values a variable is declared with (`const x = …`). */
function initsOf(variable) {
  return variable.defs.filter((d) => d.type === 'Variable' && d.node.init !== null && d.node.init !== undefined).map((d) => d.node.init);
}

function create(context) {
  const sourceCode = context.sourceCode ?? context.getSourceCode();

  /** A clock reading: a clock call, or a variable initialised with one (`const started = Date.now()`). */
  function isReading(node, scope, seen) {
    if (isClockRead(node)) return true;
    if (node.type !== 'Identifier') return false;
    const variable = findVariable(scope, node.name);
    if (variable === undefined || seen.has(variable)) return false;
    seen.add(variable);
    return initsOf(variable).some((init) => isReading(init, scope, seen));
  }

  /** A difference of readings (`Date.now() - started`), or a variable holding one (`const elapsed = …`). */
  function isElapsed(node, scope, seen = new Set()) {
    if (node === null || node === undefined) return false;
    if (node.type === 'BinaryExpression' && node.operator === '-')
      return isReading(node.left, scope, new Set()) || isReading(node.right, scope, new Set());
    if (node.type === 'Identifier') {
      const variable = findVariable(scope, node.name);
      if (variable === undefined || seen.has(variable)) return false;
      seen.add(variable);
      return initsOf(variable).some((init) => isElapsed(init, scope, seen));
    }
    return false;
  }

  /** A deadline: a variable initialised as a clock reading plus a constant (`const deadline = Date.now() + 20_000`). */
  function isDeadline(node, scope) {
    if (node?.type !== 'Identifier') return false;
    const variable = findVariable(scope, node.name);
    if (variable === undefined) return false;
    return initsOf(variable).some(
      (init) =>
        init.type === 'BinaryExpression' &&
        init.operator === '+' &&
        ((isReading(init.left, scope, new Set()) && isConstant(init.right, scope)) ||
          (isReading(init.right, scope, new Set()) && isConstant(init.left, scope))),
    );
  }

  /** A number fixed in the source: a literal, arithmetic on literals, or a const holding one. */
  function isConstant(node, scope, seen = new Set()) {
    if (node === null || node === undefined) return false;
    if (node.type === 'Literal') return typeof node.value === 'number';
    if (node.type === 'UnaryExpression') return isConstant(node.argument, scope, seen);
    if (node.type === 'BinaryExpression') return isConstant(node.left, scope, seen) && isConstant(node.right, scope, seen);
    if (node.type === 'Identifier') {
      const variable = findVariable(scope, node.name);
      if (variable === undefined || seen.has(variable)) return false;
      seen.add(variable);
      const constDecl = variable.defs.every((d) => d.type === 'Variable' && d.parent.kind === 'const');
      return constDecl && initsOf(variable).length > 0 && initsOf(variable).every((init) => isConstant(init, scope, seen));
    }
    return false;
  }

  const message =
    'A clock difference compared with a constant asserts on the machine’s speed (or is a wait with a budget): wait on a condition (test/support/waits.ts); figures belong in npm run bench.';

  return {
    BinaryExpression(node) {
      if (!relational.has(node.operator)) return;
      const scope = sourceCode.getScope(node);
      const flagged =
        (isElapsed(node.left, scope) && isConstant(node.right, scope)) ||
        (isElapsed(node.right, scope) && isConstant(node.left, scope)) ||
        (isReading(node.left, scope, new Set()) && isDeadline(node.right, scope)) ||
        (isReading(node.right, scope, new Set()) && isDeadline(node.left, scope));
      if (flagged) context.report({ node, message });
    },
    CallExpression(node) {
      const callee = node.callee;
      if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier' || !matchers.has(callee.property.name)) return;
      // expect(x).toBeLessThan(n), or expect(x).not.toBeLessThan(n)
      let target = callee.object;
      if (target.type === 'MemberExpression' && target.property.type === 'Identifier' && target.property.name === 'not')
        target = target.object;
      if (target.type !== 'CallExpression' || target.callee.type !== 'Identifier' || target.callee.name !== 'expect') return;
      const scope = sourceCode.getScope(node);
      if (isElapsed(target.arguments[0], scope) && isConstant(node.arguments[0], scope)) context.report({ node, message });
    },
  };
}

module.exports = {
  meta: {
    type: 'problem',
    docs: { description: 'no clock difference compared with a constant in tests (wait on conditions instead)' },
    schema: [],
  },
  create,
};
