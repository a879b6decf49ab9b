export { register, type RegisterOptions } from "./register.js";
export { defaultPrincipal, type PrincipalOf } from "./context.js";
