// Loads Prisma's schema engine as WebAssembly, so migrations can be authored without the
// native engine binary (which the Prisma CLI would download, and cannot here).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import * as bindings from '@prisma/schema-engine-wasm/schema_engine_bg';

const require = createRequire(import.meta.url);

export async function loadSchemaEngine(
  adapter: SqlMigrationAwareDriverAdapterFactory,
  datamodel: { path: string; content: string },
) {
  const dir = dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const bytes = await readFile(join(dir, 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, {
    './schema_engine_bg.js': bindings as unknown as WebAssembly.ModuleImports,
  });
  const exports = instance.exports as unknown as { __wbindgen_start(): void };
  (bindings as unknown as { __wbg_set_wasm(w: unknown): void }).__wbg_set_wasm(exports);
  exports.__wbindgen_start();
  (globalThis as Record<string, unknown>).PRISMA_WASM_PANIC_REGISTRY = {
    set_message(message: string) {
      throw new Error(`schema engine panicked: ${message}`);
    },
  };
  return bindings.SchemaEngine.new(
    { datamodels: [[datamodel.path, datamodel.content]] },
    (log: string) => process.env.DEBUG && console.error(log),
    bindMigrationAwareSqlAdapterFactory(adapter),
  );
}
