// Reading V8 profiles (`node --cpu-prof`, `--heap-prof`) into the few lines that say where a
// server's time and memory go: self time by function and by owner (a package under
// node_modules, a file of src/, Node's internals, the garbage collector, idle).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame; hitCount?: number }>;
  samples: number[];
}

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

export interface Share {
  name: string;
  /** Fraction of the samples (CPU) or of the sampled bytes (heap). */
  share: number;
}

/** Who a frame belongs to: the package, the service's file, or V8's own pseudo-frames. */
export function ownerOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)?.[1];
  if (pkg) return pkg;
  if (frame.url.startsWith('node:')) return 'node internals';
  const own = /\/(src|dist|bench)\/(.+)$/.exec(frame.url);
  return own ? `${own[1]}/${own[2]}` : frame.url;
}

function frameName(frame: CallFrame): string {
  const where = frame.url ? `${ownerOf(frame)}:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'} ${where}`.trim();
}

function top(weights: Map<string, number>, total: number, count: number): Share[] {
  return [...weights]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, weight]) => ({ name, share: weight / total }));
}

function add(weights: Map<string, number>, key: string, weight: number) {
  weights.set(key, (weights.get(key) ?? 0) + weight);
}

/** Self time of a CPU profile: the heaviest functions, and every owner's total. */
export function cpuShares(profile: CpuProfile, count = 25): { functions: Share[]; owners: Share[]; samples: number } {
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  for (const node of profile.nodes) {
    const weight = hits.get(node.id) ?? 0;
    if (weight === 0) continue;
    add(functions, frameName(node.callFrame), weight);
    add(owners, ownerOf(node.callFrame), weight);
  }
  const total = profile.samples.length;
  return { functions: top(functions, total, count), owners: top(owners, total, owners.size), samples: total };
}

/** A heap profile (`--heap-prof`: objects still alive when it was taken, sampled), by allocating function and by owner. */
export function heapShares(profile: { head: HeapNode }, count = 15): { functions: Share[]; owners: Share[] } {
  const functions = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  for (const stack = [profile.head]; stack.length > 0; ) {
    const node = stack.pop()!;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(functions, frameName(node.callFrame), node.selfSize);
      add(owners, ownerOf(node.callFrame), node.selfSize);
    }
    stack.push(...node.children);
  }
  return { functions: top(functions, total, count), owners: top(owners, total, count) };
}

/** The one file of `extension` a profiled process left in `dir`. */
export function profileIn(dir: string, extension: '.cpuprofile' | '.heapprofile'): unknown {
  const file = readdirSync(dir).find((name) => name.endsWith(extension));
  if (!file) throw new Error(`no ${extension} in ${dir}: did the process exit normally?`);
  return JSON.parse(readFileSync(join(dir, file), 'utf8'));
}

export function shareTable(title: string, shares: Share[]): string[] {
  return [`| ${title} | share |`, '|---|---|', ...shares.map((s) => `| ${s.name.replace(/\|/g, '\\|')} | ${(s.share * 100).toFixed(1)}% |`)];
}
