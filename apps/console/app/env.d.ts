// The bundler imports the stylesheet (Vite extracts it to a hash-named file).
declare module "*.css";
