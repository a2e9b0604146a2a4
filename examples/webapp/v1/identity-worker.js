// The web worker the SDK keeps the tokens in, away from the page's scripts. The SDK fetches it from
// <sdkUri>/v1/identity-worker.js and talks to it with JSON messages
// {request: {type}, payload}: setToken stores the payload, deleteToken forgets it, and getToken
// answers {request: {type: 'getToken'}, payload: {uuid, token}} with the uuid it was asked with.
const empty = { tokenType: null, expiresIn: null, redirectUri: null, accessToken: null, idToken: null, refreshToken: null };
let token = empty;

// secondsLeft is what the SDK reports as expiresIn: the ID token's exp minus now.
function secondsLeft(t) {
  try {
    const payload = JSON.parse(atob(t.idToken.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
    return payload.exp - Math.floor(Date.now() / 1000);
  } catch {
    return 0;
  }
}

self.onmessage = (e) => {
  let msg;
  try {
    msg = JSON.parse(e.data);
  } catch {
    return;
  }
  switch (msg.request && msg.request.type) {
    case 'setToken':
      token = msg.payload || empty;
      break;
    case 'deleteToken':
      token = empty;
      break;
    case 'getToken':
      self.postMessage(JSON.stringify({
        request: { type: 'getToken' },
        payload: { uuid: msg.payload.uuid, token: { ...token, expiresIn: token.idToken ? secondsLeft(token) : 0 } },
      }));
      break;
    default:
  }
};
