// Stylesheets are imported for their side effect: Vite bundles them into assets/*.css.
declare module '*.css';
