/** Style sheets imported for their side effect: the bundler emits them as console assets. */
declare module "*.css";
