// `npm run build` writes web/dist, which the orchestrator serves at /
// (--http-ui-dir). Asset paths are relative, so dist works from any path.
// `npm run dev` proxies the API to an orchestrator: APOLLO_HTTP (default
// http://127.0.0.1:7080).
import { defineConfig } from 'vite';

const target = process.env.APOLLO_HTTP ?? 'http://127.0.0.1:7080';
const proxy = Object.fromEntries(['/api', '/metrics', '/healthz', '/readyz'].map((p) => [p, { target, changeOrigin: true }]));

export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No CDN, no external fonts: everything the page needs is in dist.
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
  server: { proxy, strictPort: false },
  preview: { proxy },
});
