// Imported first by the command-line entry points (cli, seed, db:migrate). A command lives
// a second or two: V8's optimizing tier for WebAssembly (PGlite's database, Prisma's query
// compiler) compiles hot functions again in the background, costing more CPU than it saves
// in so short a run. With the baseline tier alone (Liftoff), `npm run cli -- keys list` on
// the embedded database took 3.0-3.2 CPU-s instead of 3.3-3.9 (npm and tsx included).
// Set before any WebAssembly is compiled (that happens when the database is opened).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--liftoff-only');
