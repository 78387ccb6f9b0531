// Text PostgreSQL cannot store faithfully is refused before any resolver sees it: a NUL
// character (PostgreSQL refuses it, which surfaced as an internal error) and a lone UTF-16
// surrogate (`"\ud800"` in JSON, silently stored as U+FFFD). One check for every operation,
// REST routes included, over variables and literals alike, naming each argument at fault.
import { Kind, type ASTNode, type DocumentNode, type ValueNode } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { invalidInput, type FieldError } from '../errors.js';

export function textFault(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  // Well-formed: every surrogate is half of a pair (String.prototype.isWellFormed, Node 20+).
  if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) return 'must be valid Unicode (it holds a lone surrogate)';
  return undefined;
}

/**
 * The faults in a variable's value. Inside an object the path is the field's own
 * (`input.lineItems[0].description` is reported as `lineItems[0].description`, as the
 * resolvers name a body's fields), so REST names it in its words.
 */
function valueFaults(value: unknown, path: string, faults: FieldError[]): void {
  if (typeof value === 'string') {
    const message = textFault(value);
    if (message) faults.push({ param: path, message });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => valueFaults(item, `${path}[${i}]`, faults));
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) valueFaults(item, path === 'input' ? key : `${path}.${key}`, faults);
  }
}

function literalFaults(node: ValueNode, path: string, faults: FieldError[]): void {
  if (node.kind === Kind.STRING) {
    const message = textFault(node.value);
    if (message) faults.push({ param: path, message });
  } else if (node.kind === Kind.LIST) {
    node.values.forEach((item, i) => literalFaults(item, `${path}[${i}]`, faults));
  } else if (node.kind === Kind.OBJECT) {
    for (const field of node.fields) literalFaults(field.value, path === 'input' ? field.name.value : `${path}.${field.name.value}`, faults);
  }
}

/** Every argument literal in the document (fragments included), checked once per document. */
function documentFaults(document: DocumentNode): FieldError[] {
  const known = checkedDocuments.get(document);
  if (known) return known;
  const faults: FieldError[] = [];
  const visit = (node: ASTNode | readonly ASTNode[] | undefined): void => {
    if (!node) return;
    if (Array.isArray(node)) return node.forEach(visit);
    const n = node as ASTNode;
    if (n.kind === Kind.ARGUMENT) return literalFaults(n.value, n.name.value, faults);
    if (n.kind === Kind.VARIABLE_DEFINITION && n.defaultValue) return literalFaults(n.defaultValue, n.variable.name.value, faults);
    if ('definitions' in n) visit(n.definitions);
    if ('variableDefinitions' in n) visit(n.variableDefinitions);
    if ('selectionSet' in n) visit(n.selectionSet);
    if ('selections' in n) visit(n.selections);
    if ('arguments' in n) visit(n.arguments);
  };
  visit(document);
  checkedDocuments.set(document, faults);
  return faults;
}

const checkedDocuments = new WeakMap<DocumentNode, FieldError[]>();

export function useTextInputRules(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const faults = [...documentFaults(args.document)];
      for (const [name, value] of Object.entries((args.variableValues ?? {}) as Record<string, unknown>)) valueFaults(value, name, faults);
      if (faults.length > 0) setResultAndStopExecution({ errors: [invalidInput(faults)] });
    },
  };
}
