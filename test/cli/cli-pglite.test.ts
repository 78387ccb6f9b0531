import { commandLineSuite } from './command-line.js';

commandLineSuite('pglite');
