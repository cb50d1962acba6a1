// Runs the TypeScript sources as they are, through Node's own type stripping (Node 22.18+ and 24):
// no compiler is loaded in a test process. tap loads this file first in every test process
// (package.json, "tap" → "node-arg"); on a Node without type stripping tap falls back to ts-node
// and this file does nothing.
//
// Two gaps it fills:
// - lib/ and test/ import each other with `.js` specifiers (tsc's NodeNext rule), which stripping
//   alone does not resolve: a `.js` specifier outside node_modules/ resolves to the `.ts` file
//   beside it when there is one.
// - Stripping refuses syntax that needs code generated (a constructor's parameter property, an
//   enum): such a module is transformed instead, with a source map, so that coverage still maps to
//   its lines. Every other module is stripped in place, its offsets unchanged, and needs no map.
import { existsSync } from 'node:fs'
import module from 'node:module'

/** The `.ts` file a `.js` specifier outside node_modules/ names, when there is one. */
const typeScriptBeside = (specifier, parentURL) => {
  if (!(specifier.startsWith('.') || specifier.startsWith('file:')) || parentURL === undefined) return undefined
  const url = new URL(specifier, parentURL)
  if (!url.pathname.endsWith('.js') || url.pathname.includes('/node_modules/')) return undefined
  url.pathname = `${url.pathname.slice(0, -3)}.ts`
  return existsSync(url) ? url.href : undefined
}

if (process.env.TAP_TYPE_STRIP_ONLY === '1') {
  // Named from the module's default export: Node 20 has neither, and loads this file all the same.
  const { registerHooks, stripTypeScriptTypes } = module
  // Node warns once a process that stripTypeScriptTypes is experimental (Node 24.21): taken here,
  // quietly, so that no test's stderr carries it.
  const { emitWarning } = process
  process.emitWarning = () => {}
  try {
    stripTypeScriptTypes('')
  } finally {
    process.emitWarning = emitWarning
  }
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const ts = typeScriptBeside(specifier, context.parentURL)
      if (ts === undefined) return nextResolve(specifier, context)
      // tap's mockImport resolves through the chain first: its mocks are keyed by the `.js` URLs,
      // and the module it mocks, and that module's imports, carry a ?tapmock= query.
      if (!ts.includes('?') && !context.parentURL.includes('?')) return nextResolve(ts, context)
      try {
        return nextResolve(specifier, context)
      } catch (error) {
        if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
        return nextResolve(ts, context)
      }
    },
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context)
      if (loaded.format !== 'module-typescript') return loaded
      const source = String(loaded.source)
      try {
        return { format: 'module', source: stripTypeScriptTypes(source), shortCircuit: true }
      } catch (error) {
        if (error?.code !== 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX') throw error
        return { format: 'module', source: stripTypeScriptTypes(source, { mode: 'transform', sourceMap: true, sourceUrl: url }), shortCircuit: true }
      }
    },
  })
}
