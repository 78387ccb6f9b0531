// The server's Request and Response classes. @whatwg-node/server writes a Response built
// by its own fetch implementation straight to the socket (the body is already a string),
// whereas Node's global Response turns every body into a web stream that the server then
// reads back chunk by chunk.
export { Request, Response } from '@whatwg-node/fetch';

/** Pages of ours that must never be framed by another site (clickjacking). */
export const NO_FRAMING = { 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'" } as const;
