import { commandLineSuite } from './command-line.js';

commandLineSuite('postgres');
