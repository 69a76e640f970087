import { Node, SyntaxKind } from 'ts-morph';
import type { McpResolver } from './mcp-imports.js';
import { referencesTo, resolveIdentifier, sameVariable } from './scope.js';

/** TasksClient methods whose options carry onStatus / onTaskCreated / onInputRequest callbacks. */
const OPTION_ARG: Record<string, number> = { callTool: 2, startTool: 2, waitForTask: 1, resumeAll: 0 };
const TASK_CALLBACKS = new Set(['onStatus', 'onTaskCreated']);
const TASK_TYPES = new Set(['TaskStatusUpdate', 'TaskSnapshot']);

function unwrap(node: Node): Node {
  let cur = node;
  while (Node.isParenthesizedExpression(cur) || Node.isNonNullExpression(cur) || Node.isAsExpression(cur) || Node.isSatisfiesExpression(cur)) cur = cur.getExpression();
  return cur;
}

/**
 * Which expressions hold a SEP-2663 task as the client helper hands it out (a TaskSnapshot):
 * results of `getTask`, the `task` of a `startTool` result, and the parameters of the
 * onStatus / onTaskCreated / onInputRequest callbacks. Purely structural, so it works the same
 * on the first run and on a re-run.
 */
export class TaskValues {
  private readonly cache = new Map<Node, boolean>();

  constructor(private readonly mcp: McpResolver) {}

  /** `expr` is a variable holding a TasksClient, or `tasksClientFor(<client>)`. */
  isTasksClient(expr: Node | undefined): boolean {
    if (!expr) return false;
    const node = unwrap(expr);
    if (Node.isCallExpression(node)) return this.mcp.isHelperExport(node.getExpression(), 'tasksClientFor');
    if (!Node.isIdentifier(node)) return false;
    const binding = resolveIdentifier(node);
    if (binding?.kind !== 'variable' || binding.element) return false;
    const init = binding.decl.getInitializer();
    return init !== undefined && Node.isNewExpression(init) && this.mcp.isHelperExport(init.getExpression(), 'TasksClient');
  }

  /** `<tasksClient>.<method>(...)`. */
  tasksClientCall(node: Node | undefined, methods: readonly string[]): boolean {
    if (!node) return false;
    const call = unwrap(node);
    if (!Node.isCallExpression(call)) return false;
    const callee = call.getExpression();
    return Node.isPropertyAccessExpression(callee) && methods.includes(callee.getName()) && this.isTasksClient(callee.getExpression());
  }

  isTask(expr: Node | undefined, depth = 0): boolean {
    if (!expr || depth > 6) return false;
    const node = unwrap(expr);
    const cached = this.cache.get(node);
    if (cached !== undefined) return cached;
    this.cache.set(node, false);
    const result = this.compute(node, depth);
    this.cache.set(node, result);
    return result;
  }

  private compute(node: Node, depth: number): boolean {
    if (Node.isAwaitExpression(node)) {
      const inner = unwrap(node.getExpression());
      if (this.tasksClientCall(inner, ['getTask'])) return true;
      // tasksClient.cancelTask(id).then(() => tasksClient.getTask(id))
      if (Node.isCallExpression(inner)) {
        const callee = inner.getExpression();
        const cb = inner.getArguments()[0];
        if (Node.isPropertyAccessExpression(callee) && callee.getName() === 'then' && this.tasksClientCall(callee.getExpression(), ['cancelTask']) && cb && Node.isArrowFunction(cb)) {
          return this.tasksClientCall(cb.getBody(), ['getTask']);
        }
      }
      return false;
    }
    if (Node.isPropertyAccessExpression(node) && node.getName() === 'task') {
      const base = unwrap(node.getExpression());
      if (!Node.isIdentifier(base)) return false;
      const binding = resolveIdentifier(base);
      if (binding?.kind !== 'variable' || binding.element) return false;
      const init = binding.decl.getInitializer();
      return init !== undefined && Node.isAwaitExpression(init) && this.tasksClientCall(init.getExpression(), ['startTool']);
    }
    if (!Node.isIdentifier(node)) return false;
    const binding = resolveIdentifier(node);
    if (!binding) return false;
    if (binding.kind === 'variable' && !binding.element) {
      const init = binding.decl.getInitializer();
      if (init) return this.isTask(init, depth + 1);
      const scope = binding.scope;
      const assigned = referencesTo(scope, node.getText(), sameVariable(binding.decl))
        .map((id) => id.getParent())
        .filter((p): p is Node => p !== undefined && Node.isBinaryExpression(p) && p.getOperatorToken().getKind() === SyntaxKind.EqualsToken && p.getLeft().getText() === node.getText())
        .map((p) => p.asKindOrThrow(SyntaxKind.BinaryExpression).getRight());
      return assigned.length > 0 && assigned.every((e) => this.isTask(e, depth + 1));
    }
    if (binding.kind === 'parameter' && !binding.element) return this.isTaskParameter(binding.param);
    return false;
  }

  private isTaskParameter(param: Node): boolean {
    const fn = param.getParent();
    if (!fn || !(Node.isArrowFunction(fn) || Node.isFunctionExpression(fn) || Node.isMethodDeclaration(fn))) return false;
    const index = fn.getParameters().indexOf(param as never);
    const typeNode = (param as unknown as { getTypeNode(): Node | undefined }).getTypeNode();
    if (typeNode && Node.isTypeReference(typeNode) && TASK_TYPES.has(typeNode.getTypeName().getText()) && this.mcp.isHelperExport(typeNode.getTypeName(), typeNode.getTypeName().getText())) return true;
    return this.callbackRole(fn) === 'task-callback' ? index === 0 : this.callbackRole(fn) === 'input-handler' ? index === 1 : false;
  }

  /** What a function is passed as: an onStatus/onTaskCreated callback, an onInputRequest handler, or nothing known. */
  private callbackRole(fn: Node): 'task-callback' | 'input-handler' | undefined {
    const parent = fn.getParent();
    let propName: string | undefined;
    let obj: Node | undefined;
    if (Node.isMethodDeclaration(fn) && parent && Node.isObjectLiteralExpression(parent)) {
      propName = fn.getName();
      obj = parent;
    } else if (parent && Node.isPropertyAssignment(parent) && parent.getInitializer() === fn) {
      propName = parent.getName();
      obj = parent.getParent();
    } else if (parent && Node.isVariableDeclaration(parent) && parent.getInitializer() === fn) {
      // const onTaskStatus = (task) => ...; used as `onStatus: onTaskStatus`
      const scope = parent.getFirstAncestor((a) => Node.isBlock(a) || Node.isSourceFile(a));
      if (!scope) return undefined;
      for (const ref of referencesTo(scope, parent.getName(), sameVariable(parent))) {
        const prop = ref.getParent();
        if (prop && (Node.isPropertyAssignment(prop) || Node.isShorthandPropertyAssignment(prop))) {
          const role = this.roleOfProperty(prop.getName(), prop.getParent());
          if (role) return role;
        }
      }
      return undefined;
    }
    return propName ? this.roleOfProperty(propName, obj) : undefined;
  }

  private roleOfProperty(name: string, obj: Node | undefined): 'task-callback' | 'input-handler' | undefined {
    if (!obj || !Node.isObjectLiteralExpression(obj)) return undefined;
    const holder = obj.getParent();
    if (name === 'onInputRequest') {
      if (holder && Node.isNewExpression(holder) && this.mcp.isHelperExport(holder.getExpression(), 'TasksClient')) return 'input-handler';
      if (holder && Node.isCallExpression(holder) && this.isOptionsArg(holder, obj)) return 'input-handler';
      return undefined;
    }
    if (TASK_CALLBACKS.has(name) && holder && Node.isCallExpression(holder) && this.isOptionsArg(holder, obj)) return 'task-callback';
    return undefined;
  }

  private isOptionsArg(call: Node, obj: Node): boolean {
    if (!Node.isCallExpression(call)) return false;
    const callee = call.getExpression();
    if (!Node.isPropertyAccessExpression(callee) || !this.isTasksClient(callee.getExpression())) return false;
    const index = OPTION_ARG[callee.getName()];
    return index !== undefined && call.getArguments()[index] === obj;
  }
}
