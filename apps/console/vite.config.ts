import { defineConfig } from "vite";

// Served by the gateway at /console/ (services/gateway/src/adapters/http/routes/console.ts): every asset is
// bundled and hash-named under assets/, nothing comes from a CDN, and nothing is inlined (the CSP forbids it).
export default defineConfig({
  base: "/console/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
});
