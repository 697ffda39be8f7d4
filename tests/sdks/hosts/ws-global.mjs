// What `import ws from 'ws'` becomes in the Chromium and workerd bundles of
// hosts.mjs (esbuild --alias:ws=…): the platform's own WebSocket. The `ws`
// package is Node's transport for supabase's realtime client (adapters/supabase.mjs).
export default globalThis.WebSocket;
