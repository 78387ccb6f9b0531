// Small server-rendered pages for people (login, API keys). No build step, no scripts
// beyond a copy button; every interpolated value is escaped.

export function escape(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
  body { max-width: 64rem; margin: 2rem auto; padding: 0 1rem; }
  header { display: flex; justify-content: space-between; align-items: center; border-bottom: 1px solid #8884; margin-bottom: 1.5rem; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; font-size: .92rem; }
  th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid #8883; vertical-align: top; }
  label { display: block; margin: .6rem 0 .2rem; font-weight: 600; }
  input[type=text], input[type=email], input[type=password], input[type=date] { padding: .45rem; width: min(100%, 24rem); font: inherit; }
  fieldset { border: 1px solid #8884; border-radius: .4rem; } fieldset label { display: inline-block; font-weight: normal; margin-right: 1rem; }
  button { font: inherit; padding: .45rem .9rem; border-radius: .35rem; border: 1px solid #8886; cursor: pointer; }
  button.primary { background: #2457d6; color: white; border-color: #2457d6; }
  button.danger { color: #b3261e; }
  .notice { padding: .8rem 1rem; border-radius: .4rem; background: #2457d61a; border: 1px solid #2457d655; }
  .error { padding: .8rem 1rem; border-radius: .4rem; background: #b3261e1a; border: 1px solid #b3261e55; }
  code.secret { font-size: 1rem; padding: .3rem .5rem; background: #8882; border-radius: .3rem; word-break: break-all; }
  .status-active { color: #1b7f3b; } .status-revoked, .status-expired { color: #b3261e; }
`;

export function layout(title: string, body: string, user?: { email: string; csrf: string }): string {
  const account = user
    ? `<form method="post" action="/logout"><input type="hidden" name="csrf" value="${escape(user.csrf)}">
         <span>${escape(user.email)}</span> <button type="submit">Log out</button></form>`
    : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · CRM</title><style>${STYLE}</style></head>
<body><header><h1>${escape(title)}</h1>${account}</header><main>${body}</main></body>
</html>`;
}
