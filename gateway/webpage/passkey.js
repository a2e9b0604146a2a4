// The WebAuthn ceremony of the page's form#passkey-form: data-mode "create" or "get", data-options
// the publicKey options' JSON (binary values base64url). The button #passkey-button starts it,
// once the form's own fields are valid; the credential goes into the form's passkey field as JSON
// (binary values base64url) and the form is posted; a refusal or error shows #passkey-error.
// Without the WebAuthn API the button stays hidden.
(function () {
  var form = document.getElementById("passkey-form");
  var button = document.getElementById("passkey-button");
  if (!form || !button || !window.PublicKeyCredential) { return; }
  function bytes(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) { s += "="; }
    return Uint8Array.from(atob(s), function (c) { return c.charCodeAt(0); });
  }
  function text(buf) {
    var out = "", b = new Uint8Array(buf);
    for (var i = 0; i < b.length; i++) { out += String.fromCharCode(b[i]); }
    return btoa(out).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    if (!form.reportValidity()) { return; }
    var pk = JSON.parse(form.dataset.options);
    pk.challenge = bytes(pk.challenge);
    if (pk.user) { pk.user.id = bytes(pk.user.id); }
    (pk.excludeCredentials || []).concat(pk.allowCredentials || []).forEach(function (c) { c.id = bytes(c.id); });
    var create = form.dataset.mode === "create";
    var ceremony = create ? navigator.credentials.create({publicKey: pk}) : navigator.credentials.get({publicKey: pk});
    ceremony.then(function (cred) {
      var r = cred.response, out = {id: cred.id, rawId: text(cred.rawId), type: cred.type,
        response: {clientDataJSON: text(r.clientDataJSON)}, clientExtensionResults: cred.getClientExtensionResults()};
      if (create) {
        out.response.attestationObject = text(r.attestationObject);
        out.response.transports = r.getTransports ? r.getTransports() : [];
      } else {
        out.response.authenticatorData = text(r.authenticatorData);
        out.response.signature = text(r.signature);
        if (r.userHandle) { out.response.userHandle = text(r.userHandle); }
      }
      form.elements.passkey.value = JSON.stringify(out);
      form.submit();
    }).catch(function () {
      document.getElementById("passkey-error").hidden = false;
    });
  });
})();
