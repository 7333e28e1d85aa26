/** What the local scripts (`npm start`, `npm run token`) use from the gateway's build. */
export { developmentSecret } from "./dev-secret";
export { mintDevelopmentToken, type DevTokenClaims } from "./dev-token";
