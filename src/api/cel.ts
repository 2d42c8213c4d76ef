/**
 * The part of CEL (the Common Expression Language of the CRDs' `x-kubernetes-validations`)
 * that the rules of src/api are written in, evaluated offline so that `lorenz workflow
 * validate` refuses what admission would: literals (integers, 'strings', true, false,
 * lists), `self` and `oldSelf`, field selection, `!`, `&&`, `||`, `==`, `!=`, `in`,
 * `has(x.f)`, `size(x)`, `x.all(v, e)` and `x.exists(v, e)`. A rule outside that part does
 * not parse (CelSyntaxError): a test parses every rule of the CRDs, so a new rule that this
 * cannot evaluate fails there rather than being skipped here.
 */

export class CelSyntaxError extends Error {
  constructor(rule: string, reason: string) {
    super(`cannot evaluate the CEL rule ${JSON.stringify(rule)}: ${reason}`);
    this.name = 'CelSyntaxError';
  }
}

/** An evaluation that CEL itself would fail (a missing field selected, a type mismatch). */
export class CelRuntimeError extends Error {}

type Node =
  | { kind: 'literal'; value: unknown }
  | { kind: 'ident'; name: string }
  | { kind: 'list'; items: Node[] }
  | { kind: 'select'; operand: Node; field: string }
  | { kind: 'not'; operand: Node }
  | { kind: 'binary'; op: '&&' | '||' | '==' | '!=' | 'in'; left: Node; right: Node }
  | { kind: 'call'; name: 'has' | 'size'; arg: Node }
  | { kind: 'macro'; name: 'all' | 'exists'; target: Node; variable: string; body: Node };

const TOKEN =
  /\s*(?:(\d+)|'([^']*)'|"([^"]*)"|([A-Za-z_][A-Za-z0-9_]*)|(&&|\|\||==|!=|[()[\],.!]))/y;

type Token =
  | { type: 'int'; value: number }
  | { type: 'string'; value: string }
  | { type: 'name' | 'op'; value: string };

function tokenize(rule: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < rule.length) {
    if (/^\s*$/.test(rule.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(rule);
    if (!match) throw new CelSyntaxError(rule, `unexpected text at ${at}: ${rule.slice(at)}`);
    const [, int, single, double, name, op] = match;
    if (int !== undefined) tokens.push({ type: 'int', value: Number(int) });
    else if (single !== undefined || double !== undefined) {
      tokens.push({ type: 'string', value: single ?? double ?? '' });
    } else if (name !== undefined) tokens.push({ type: 'name', value: name });
    else tokens.push({ type: 'op', value: op ?? '' });
  }
  return tokens;
}

/** Recursive descent, lowest precedence first: || < && < == != in < ! < selection. */
function parse(rule: string): Node {
  const tokens = tokenize(rule);
  let index = 0;
  const peek = (value: string) => {
    const token = tokens[index];
    return (
      token !== undefined && (token.type === 'op' || token.type === 'name') && token.value === value
    );
  };
  const expect = (value: string) => {
    if (!peek(value)) throw new CelSyntaxError(rule, `expected ${value} at token ${index}`);
    index += 1;
  };
  const name = (): string => {
    const token = tokens[index];
    if (token?.type !== 'name') throw new CelSyntaxError(rule, `expected a name at token ${index}`);
    index += 1;
    return token.value;
  };
  const or = (): Node => {
    let left = and();
    while (peek('||')) {
      index += 1;
      left = { kind: 'binary', op: '||', left, right: and() };
    }
    return left;
  };
  const and = (): Node => {
    let left = relation();
    while (peek('&&')) {
      index += 1;
      left = { kind: 'binary', op: '&&', left, right: relation() };
    }
    return left;
  };
  const relation = (): Node => {
    const left = unary();
    for (const op of ['==', '!=', 'in'] as const) {
      if (peek(op)) {
        index += 1;
        return { kind: 'binary', op, left, right: unary() };
      }
    }
    return left;
  };
  const unary = (): Node => {
    if (peek('!')) {
      index += 1;
      return { kind: 'not', operand: unary() };
    }
    return postfix();
  };
  const postfix = (): Node => {
    let node = primary();
    while (peek('.')) {
      index += 1;
      const field = name();
      if (peek('(')) {
        if (field !== 'all' && field !== 'exists') {
          throw new CelSyntaxError(rule, `the method ${field}() is not supported`);
        }
        expect('(');
        const variable = name();
        expect(',');
        const body = or();
        expect(')');
        node = { kind: 'macro', name: field, target: node, variable, body };
      } else node = { kind: 'select', operand: node, field };
    }
    return node;
  };
  const primary = (): Node => {
    const token = tokens[index];
    if (token === undefined) throw new CelSyntaxError(rule, 'unexpected end');
    if (token.type === 'int' || token.type === 'string') {
      index += 1;
      return { kind: 'literal', value: token.value };
    }
    if (peek('(')) {
      index += 1;
      const inner = or();
      expect(')');
      return inner;
    }
    if (peek('[')) {
      index += 1;
      const items: Node[] = [];
      while (!peek(']')) {
        items.push(or());
        if (!peek(']')) expect(',');
      }
      expect(']');
      return { kind: 'list', items };
    }
    const word = name();
    if (word === 'true' || word === 'false') return { kind: 'literal', value: word === 'true' };
    if (peek('(')) {
      if (word !== 'has' && word !== 'size') {
        throw new CelSyntaxError(rule, `the function ${word}() is not supported`);
      }
      expect('(');
      const arg = or();
      expect(')');
      if (word === 'has' && arg.kind !== 'select') {
        throw new CelSyntaxError(rule, 'has() takes a field selection');
      }
      return { kind: 'call', name: word, arg };
    }
    return { kind: 'ident', name: word };
  };
  const node = or();
  if (index !== tokens.length) throw new CelSyntaxError(rule, `unexpected token ${index}`);
  return node;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function equal(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => equal(item, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => equal(a[key], b[key]));
  }
  return a === b;
}

function evaluate(node: Node, scope: Readonly<Record<string, unknown>>): unknown {
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'ident':
      if (!Object.hasOwn(scope, node.name)) throw new CelRuntimeError(`undeclared ${node.name}`);
      return scope[node.name];
    case 'list':
      return node.items.map((item) => evaluate(item, scope));
    case 'select': {
      const operand = evaluate(node.operand, scope);
      if (!isMap(operand) || !Object.hasOwn(operand, node.field)) {
        throw new CelRuntimeError(`no such key: ${node.field}`);
      }
      return operand[node.field];
    }
    case 'not':
      return !truth(evaluate(node.operand, scope));
    case 'binary':
      return binary(node, scope);
    case 'call': {
      if (node.name === 'has') {
        const select = node.arg as Extract<Node, { kind: 'select' }>;
        const operand = evaluate(select.operand, scope);
        return isMap(operand) && Object.hasOwn(operand, select.field);
      }
      const value = evaluate(node.arg, scope);
      if (typeof value === 'string') return [...value].length;
      if (Array.isArray(value)) return value.length;
      if (isMap(value)) return Object.keys(value).length;
      throw new CelRuntimeError('size() of a value without a size');
    }
    case 'macro': {
      const target = evaluate(node.target, scope);
      const items = Array.isArray(target) ? target : isMap(target) ? Object.keys(target) : null;
      if (items === null) throw new CelRuntimeError(`${node.name}() over a scalar`);
      const test = (item: unknown) =>
        truth(evaluate(node.body, { ...scope, [node.variable]: item }));
      return node.name === 'all' ? items.every(test) : items.some(test);
    }
  }
}

function binary(node: Extract<Node, { kind: 'binary' }>, scope: Readonly<Record<string, unknown>>) {
  if (node.op === '&&')
    return truth(evaluate(node.left, scope)) && truth(evaluate(node.right, scope));
  if (node.op === '||')
    return truth(evaluate(node.left, scope)) || truth(evaluate(node.right, scope));
  const left = evaluate(node.left, scope);
  const right = evaluate(node.right, scope);
  if (node.op === '==') return equal(left, right);
  if (node.op === '!=') return !equal(left, right);
  if (Array.isArray(right)) return right.some((item) => equal(item, left));
  if (isMap(right)) return typeof left === 'string' && Object.hasOwn(right, left);
  throw new CelRuntimeError('in over a scalar');
}

function truth(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new CelRuntimeError('not a boolean');
  return value;
}

/** A parsed rule: whether it is a transition rule (it reads oldSelf), and its test. */
export interface CelRule {
  transition: boolean;
  /** true: the value passes; throws CelRuntimeError where CEL would fail to evaluate. */
  holds: (self: unknown) => boolean;
}

function mentionsOldSelf(node: Node): boolean {
  switch (node.kind) {
    case 'ident':
      return node.name === 'oldSelf';
    case 'literal':
      return false;
    case 'list':
      return node.items.some(mentionsOldSelf);
    case 'select':
    case 'not':
      return mentionsOldSelf(node.operand);
    case 'binary':
      return mentionsOldSelf(node.left) || mentionsOldSelf(node.right);
    case 'call':
      return mentionsOldSelf(node.arg);
    case 'macro':
      return mentionsOldSelf(node.target) || mentionsOldSelf(node.body);
  }
}

/** Parse a rule once; throws CelSyntaxError for what is outside the supported part. */
export function compileCelRule(rule: string): CelRule {
  const node = parse(rule);
  return {
    transition: mentionsOldSelf(node),
    holds: (self) => truth(evaluate(node, { self })),
  };
}
