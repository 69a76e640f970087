import { Node, SyntaxKind, ts, type BinaryExpression, type SourceFile, type SwitchStatement } from 'ts-morph';
import { callsNamed, nodesOfKind } from '../raw.js';
import { LEGACY_STATUS_TO_SEP2663, type DialectStatus } from '../../src/mapping/statuses.js';
import { matchRawRequest, unwrapExpression } from '../mcp-calls.js';
import { CLIENT_HELPER_MODULE } from '../mcp-imports.js';
import { resolveIdentifier } from '../scope.js';
import { DIALECT_WORDS, statusOf } from '../status-words.js';
import { TaskValues } from '../task-values.js';
import { indentationAt } from '../text.js';
import type { Transform, TransformContext } from './types.js';

const INCLUDES: ReadonlySet<string> = new Set(['includes']);
/** A quoted dialect word somewhere in a node's text (a cheap filter before looking closer). */
const WORD_IN_TEXT = new RegExp(`(['"\`])(${[...DIALECT_WORDS].join('|')})\\1`);
const EQUALITY = new Set([SyntaxKind.EqualsEqualsEqualsToken, SyntaxKind.EqualsEqualsToken, SyntaxKind.ExclamationEqualsEqualsToken, SyntaxKind.ExclamationEqualsToken]);

/** `x === 'done'`-like comparisons with a dialect word on one side, found on the bare AST. */
function comparisonsWithWords(sf: SourceFile): BinaryExpression[] {
  const isWord = (n: ts.Node): boolean => (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) && DIALECT_WORDS.has(n.text);
  return nodesOfKind<BinaryExpression>(sf, SyntaxKind.BinaryExpression, sf, (n) => {
    const b = n as ts.BinaryExpression;
    return EQUALITY.has(b.operatorToken.kind) && (isWord(b.left) || isWord(b.right));
  });
}

function literalOf(node: Node): string | undefined {
  return Node.isStringLiteral(node) || Node.isNoSubstitutionTemplateLiteral(node) ? node.getLiteralText() : undefined;
}

export const taskStatuses: Transform = {
  name: 'task-statuses',
  description: `tasks/create-dialect status words compared with a migrated task's status → SEP-2663 (${Object.entries(LEGACY_STATUS_TO_SEP2663).map(([a, b]) => `${a} → ${b.join('|')}`).join(', ')}); untraceable ones are marked`,
  triggers: [CLIENT_HELPER_MODULE, 'tasks/create', 'tasks/status'],
  phase: 3,
  run(ctx) {
    const values = new TaskValues(ctx.mcp);
    const isTask = (n: Node): boolean => values.isTask(n);
    const unprovable = (subject: Node): boolean => ctx.facts.usesDialect && !isTask(subject) && !holdsOldTask(subject, ctx.mcp.methodValues);

    const chains = comparisonChains(ctx.sourceFile, isTask);
    for (const chain of chains) rewriteChain(ctx, chain);
    const inChain = (n: Node): boolean => chains.some((c) => n.getStart() >= c.node.getStart() && n.getEnd() <= c.node.getEnd());
    for (const bin of comparisonsWithWords(ctx.sourceFile)) {
      if (inChain(bin)) continue;
      const op = bin.getOperatorToken().getKind();
      const eq = op === SyntaxKind.EqualsEqualsEqualsToken || op === SyntaxKind.EqualsEqualsToken;
      const ne = op === SyntaxKind.ExclamationEqualsEqualsToken || op === SyntaxKind.ExclamationEqualsToken;
      if (!eq && !ne) continue;
      const [l, r] = [bin.getLeft(), bin.getRight()];
      const [access, lit] = statusOf(l, () => true) ? [l, r] : statusOf(r, () => true) ? [r, l] : [undefined, undefined];
      const word = lit ? literalOf(lit) : undefined;
      if (!access || !lit || word === undefined || !DIALECT_WORDS.has(word)) continue;
      const subject = (access as import('ts-morph').PropertyAccessExpression).getExpression();
      if (isTask(subject)) rewriteComparison(ctx, bin, access, lit, word as DialectStatus, eq);
      else if (unprovable(subject)) ctx.marker(bin, 'status-literal');
    }
    for (const sw of nodesOfKind<SwitchStatement>(ctx.sourceFile, SyntaxKind.SwitchStatement)) {
      const disc = sw.getExpression();
      if (!statusOf(disc, () => true)) continue;
      const subject = (disc as import('ts-morph').PropertyAccessExpression).getExpression();
      if (isTask(subject)) rewriteSwitch(ctx, sw);
      else if (unprovable(subject) && sw.getClauses().some((c) => Node.isCaseClause(c) && DIALECT_WORDS.has(literalOf(c.getExpression()) ?? ''))) ctx.marker(sw, 'status-literal');
    }
    for (const call of callsNamed(ctx.sourceFile, INCLUDES)) {
      const callee = call.getExpression();
      const [arg] = call.getArguments();
      if (!Node.isPropertyAccessExpression(callee) || callee.getName() !== 'includes' || !arg || !statusOf(arg, () => true)) continue;
      const list = callee.getExpression();
      if (!Node.isArrayLiteralExpression(list)) continue;
      const words = list.getElements().map(literalOf);
      if (words.some((w) => w === undefined) || !words.some((w) => DIALECT_WORDS.has(w!))) continue;
      const subject = (arg as import('ts-morph').PropertyAccessExpression).getExpression();
      if (!isTask(subject)) {
        if (unprovable(subject)) ctx.marker(call, 'status-literal');
        continue;
      }
      const q = list.getElements()[0]!.getText()[0];
      const mapped = [...new Set(words.flatMap((w): readonly string[] => (DIALECT_WORDS.has(w!) ? LEGACY_STATUS_TO_SEP2663[w as DialectStatus] : [w!])))];
      if (ctx.replaceNode(list, `[${mapped.map((m) => `${q}${m}${q}`).join(', ')}]`)) ctx.rewrote(list);
    }
  },
};

function rewriteComparison(ctx: TransformContext, bin: BinaryExpression, access: Node, lit: Node, word: DialectStatus, eq: boolean): void {
  const mapped = LEGACY_STATUS_TO_SEP2663[word];
  const q = lit.getText()[0];
  if (mapped.length === 1) {
    if (ctx.replaceNode(lit, `${q}${mapped[0]}${q}`)) ctx.rewrote(lit);
    return;
  }
  const op = bin.getOperatorToken().getText();
  const join = eq ? ' || ' : ' && ';
  const inner = mapped.map((m) => `${access.getText()} ${op} ${q}${m}${q}`).join(join);
  if (ctx.replaceNode(bin, needsParens(bin) ? `(${inner})` : inner)) ctx.rewrote(bin);
}

interface Chain {
  node: BinaryExpression;
  subject: string;
  op: string;
  quote: string;
  words: string[];
}

function strip(node: Node): Node {
  let cur = node;
  while (Node.isParenthesizedExpression(cur)) cur = cur.getExpression();
  return cur;
}

/**
 * `t.status === 'pending' || t.status === 'running'` (and `!==` joined by `&&`) as a whole, so the
 * rewrite can list each SEP-2663 status once.
 */
function comparisonChains(sf: SourceFile, isTask: (n: Node) => boolean): Chain[] {
  const chains: Chain[] = [];
  const joins = nodesOfKind<BinaryExpression>(sf, SyntaxKind.BinaryExpression, sf, (n) => {
    const op = (n as ts.BinaryExpression).operatorToken.kind;
    return (op === SyntaxKind.BarBarToken || op === SyntaxKind.AmpersandAmpersandToken) && WORD_IN_TEXT.test(n.getText());
  });
  for (const bin of joins) {
    const join = bin.getOperatorToken().getKind();
    let up: Node | undefined = bin.getParent();
    while (up && Node.isParenthesizedExpression(up)) up = up.getParent();
    if (up && Node.isBinaryExpression(up) && up.getOperatorToken().getKind() === join) continue; // not the top of the chain
    const operands: Node[] = [];
    const flatten = (n: Node): void => {
      const x = strip(n);
      if (Node.isBinaryExpression(x) && x.getOperatorToken().getKind() === join) {
        flatten(x.getLeft());
        flatten(x.getRight());
      } else operands.push(x);
    };
    flatten(bin);
    const want = join === SyntaxKind.BarBarToken ? ['===', '=='] : ['!==', '!='];
    let subject: string | undefined;
    let op: string | undefined;
    let quote = "'";
    const words: string[] = [];
    const ok = operands.every((o) => {
      if (!Node.isBinaryExpression(o) || !want.includes(o.getOperatorToken().getText())) return false;
      const [l, r] = [o.getLeft(), o.getRight()];
      const access = statusOf(l, () => true) ? strip(l) : statusOf(r, () => true) ? strip(r) : undefined;
      const lit = access === strip(l) ? r : l;
      const word = access ? literalOf(strip(lit)) : undefined;
      if (!access || word === undefined || !Node.isPropertyAccessExpression(access) || !isTask(access.getExpression())) return false;
      if (subject !== undefined && (subject !== access.getText() || op !== o.getOperatorToken().getText())) return false;
      subject = access.getText();
      op = o.getOperatorToken().getText();
      quote = strip(lit).getText()[0]!;
      words.push(word);
      return true;
    });
    if (ok && subject && op && words.some((w) => DIALECT_WORDS.has(w))) chains.push({ node: bin, subject, op, quote, words });
  }
  return chains;
}

function rewriteChain(ctx: TransformContext, chain: Chain): void {
  const statuses = [...new Set(chain.words.flatMap((w): readonly string[] => (DIALECT_WORDS.has(w) ? LEGACY_STATUS_TO_SEP2663[w as DialectStatus] : [w])))];
  const join = chain.op.startsWith('!') ? ' && ' : ' || ';
  const text = statuses.map((s) => `${chain.subject} ${chain.op} ${chain.quote}${s}${chain.quote}`).join(join);
  // One status per old word and the same join: the chain keeps its precedence, except when a && chain became an || one.
  const widened = statuses.length > 1 && chain.words.length === 1;
  if (ctx.replaceNode(chain.node, widened && needsParens(chain.node) ? `(${text})` : text)) ctx.rewrote(chain.node);
}

function rewriteSwitch(ctx: TransformContext, sw: SwitchStatement): void {
  const seen = new Set<string>();
  for (const clause of sw.getClauses()) {
    if (!Node.isCaseClause(clause)) continue;
    const lit = clause.getExpression();
    const word = literalOf(lit);
    if (word === undefined) continue;
    if (!DIALECT_WORDS.has(word)) {
      seen.add(word);
      continue;
    }
    const mapped = LEGACY_STATUS_TO_SEP2663[word as DialectStatus].filter((m) => !seen.has(m));
    for (const m of mapped) seen.add(m);
    const q = lit.getText()[0];
    if (mapped.length === 0) {
      // Every status this word stands for already has a case above: an empty fall-through label can go.
      if (clause.getStatements().length === 0 ? ctx.removeStatement(clause) : (ctx.marker(clause, 'status-literal'), false)) ctx.rewrote(clause);
      continue;
    }
    const indent = indentationAt(ctx.text, clause.getStart());
    const text = mapped.map((m) => `${q}${m}${q}`).join(`:\n${indent}case `);
    if (ctx.replaceNode(lit, text)) ctx.rewrote(lit);
  }
}

/** A variable that still holds the answer of an old request (the flow around it was not migrated): its words are still right. */
function holdsOldTask(subject: Node, typed: ReadonlyMap<string, string> | undefined, depth = 0): boolean {
  const node = unwrapExpression(subject);
  if (depth > 4 || !Node.isIdentifier(node)) return false;
  const binding = resolveIdentifier(node);
  if (binding?.kind !== 'variable' || binding.element) return false;
  const declared = binding.decl.getInitializer();
  let init: Node | undefined = declared ? unwrapExpression(declared) : undefined;
  if (init && Node.isAwaitExpression(init)) init = unwrapExpression(init.getExpression());
  if (!init) return false;
  if (Node.isCallExpression(init)) return matchRawRequest(init, typed) !== undefined;
  return Node.isIdentifier(init) && holdsOldTask(init, typed, depth + 1);
}

/** A comparison replaced by an `a || b` chain needs parentheses unless it stands alone (a condition, an argument, a return value). */
function needsParens(node: Node): boolean {
  const parent = node.getParent();
  if (!parent) return false;
  return Node.isBinaryExpression(parent) || Node.isPrefixUnaryExpression(parent) || Node.isConditionalExpression(parent) || Node.isPropertyAccessExpression(parent) || Node.isAsExpression(parent);
}
