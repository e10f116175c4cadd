package auth

import (
	"html/template"

	"github.com/audiopost/audiopost/transport/internal/webstyle"
)

// pageData is what every page template sees.
type pageData struct {
	CSS      template.CSS
	Nav      webstyle.Links
	Prefix   string
	Title    string
	User     string // logged-in username, empty on the login page
	CSRF     string
	Error    string
	Action   string // form target
	Next     string
	Username string // login form prefill

	Client      string
	RedirectURI string
	Hidden      []hiddenField

	Keys    []keyRow
	Clients []clientRow
	Secret  *secretInfo // a secret to show once
	Alert   *loginAlert // refused logins to tell the user about
}

type hiddenField struct{ Name, Value string }

type keyRow struct {
	ID, Name, Created, LastUsed, Expires string
	Revoked, Expired                     bool
}

type clientRow struct {
	ID, Name, Created string
	RedirectURIs      []string
	Public            bool
}

type secretInfo struct{ What, ClientID, Secret string }

const layoutHTML = `{{define "layout"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · audiopost</title>
<style>{{.CSS}}</style></head><body>
{{template "nav" .Nav}}
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{template "content" .}}
</body></html>{{end}}`

const loginHTML = `{{define "content"}}<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="next" value="{{.Next}}">
<label for="username">Username or email</label><input type="text" id="username" name="username" value="{{.Username}}" autocomplete="username" required autofocus>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button>Log in</button></div>
</form>
<p class="hint">The first account is created when the server starts for the first time: <code>audiopost serve</code> prints its
generated password once (or takes <code>-admin-user</code> and <code>-admin-password</code>); the operator adds more with
<code>audiopost user add</code>.</p>{{end}}`

const consentHTML = `{{define "content"}}<p><strong>{{.Client}}</strong> asks for access to your audiopost account
<strong>{{.User}}</strong>: it will be able to read and change your productions and presets and spend your credits.</p>
<p>You will be sent back to <code>{{.RedirectURI}}</code>.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button>
</form>{{end}}`

const accountHTML = `{{define "content"}}
{{with .Alert}}<div class="secret" role="alert"><p>At least {{.Count}} login attempt(s) to this account were refused after too many wrong passwords,
the last from <code>{{.LastAddr}}</code> at {{.LastAt}}. If that was not you, choose a strong password; your own logins from other
addresses are not affected.</p><form method="post" action="{{$.Prefix}}/account/alerts/dismiss/">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><button>Dismiss</button></form></div>{{end}}
{{with .Secret}}<div class="secret" role="status"><p>New {{.What}}.{{if .ClientID}} Client ID: <code>{{.ClientID}}</code>.{{end}}
{{if .Secret}}Copy the secret now, it is not shown again:</p><p><code id="secret">{{.Secret}}</code></p>{{else}}It is a public client without a secret.</p>{{end}}</div>{{end}}
<h2>API keys</h2>
<table><tr><th>Name</th><th>Created</th><th>Last used</th><th>Expires</th><th></th></tr>
{{range .Keys}}<tr><td>{{.Name}}</td><td>{{.Created}}</td><td>{{or .LastUsed "never"}}</td><td>{{or .Expires "never"}}</td>
<td>{{if .Revoked}}revoked{{else if .Expired}}expired{{else}}<form method="post" action="{{$.Prefix}}/account/keys/revoke/">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button>Revoke</button></form>{{end}}</td></tr>
{{else}}<tr><td colspan="5">No keys yet.</td></tr>{{end}}</table>
<form method="post" action="{{.Prefix}}/account/keys/">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label>Name <input type="text" name="name" required maxlength="200"></label>
<label>Expires on (optional) <input type="date" name="expires"></label>
<button>Create key</button></form>
<h2>OAuth applications</h2>
<table><tr><th>Name</th><th>Client ID</th><th>Redirect URIs</th><th>Type</th><th></th></tr>
{{range .Clients}}<tr><td>{{.Name}}</td><td><code>{{.ID}}</code></td><td>{{range .RedirectURIs}}<code>{{.}}</code><br>{{else}}(given at authorization){{end}}</td>
<td>{{if .Public}}public{{else}}confidential{{end}}</td><td><form method="post" action="{{$.Prefix}}/account/clients/delete/">
<input type="hidden" name="csrf_token" value="{{$.CSRF}}"><input type="hidden" name="id" value="{{.ID}}"><button>Delete</button></form></td></tr>
{{else}}<tr><td colspan="5">No applications yet.</td></tr>{{end}}</table>
<form method="post" action="{{.Prefix}}/account/clients/">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<label>Name <input type="text" name="name" required maxlength="200"></label>
<label>Redirect URIs, one per line (optional) <textarea name="redirect_uris" rows="3"></textarea></label>
<label><input type="checkbox" name="public" value="1"> Public client (desktop or mobile app without a secret; must use PKCE)</label>
<button>Register application</button></form>
<h2>Sessions</h2>
<p>Log out of every browser and revoke the access tokens of every OAuth application (API keys stay). A password change does the same.</p>
<form method="post" action="{{.Prefix}}/account/logout-everywhere/">
<input type="hidden" name="csrf_token" value="{{.CSRF}}"><button>Log out everywhere</button></form>{{end}}`

const errorHTML = `{{define "content"}}<p><a href="{{.Prefix}}/account/">Account</a></p>{{end}}`

// pageNav is the navigation bar of the account pages: the same as the
// other pages of the service.
func (d *pageData) pageNav() {
	p := d.Prefix
	d.Nav = webstyle.Links{Home: p + "/", Account: p + "/account/", User: d.User}
	if d.User != "" {
		d.Nav.Productions, d.Nav.Upload, d.Nav.Services = p+"/productions/", p+"/upload/", p+"/services/"
		d.Nav.LogoutURL, d.Nav.CSRF = p+"/account/logout/", d.CSRF
	}
}

// pages are parsed once at start-up; a template error is a programming
// error and panics at init.
var pages = func() map[string]*template.Template {
	base := template.Must(template.Must(template.New("layout").Parse(layoutHTML)).Parse(webstyle.Nav))
	m := map[string]*template.Template{}
	for name, content := range map[string]string{
		"login": loginHTML, "consent": consentHTML, "account": accountHTML, "error": errorHTML,
	} {
		m[name] = template.Must(template.Must(base.Clone()).Parse(content))
	}
	return m
}()
