// REST speaks snake_case, GraphQL camelCase: the one conversion between them.

/** `due_date` -> `dueDate`. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `lineItems[0].unitAmount` -> `line_items[0].unit_amount`. */
export function restParam(graphqlPath: string): string {
  return graphqlPath
    .split('.')
    .map((part) => part.replace(/^[A-Za-z]+/, (name) => snakeCase(name)))
    .join('.');
}
