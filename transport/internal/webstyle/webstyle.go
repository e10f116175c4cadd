// Package webstyle is the one look of audiopost's web pages: the style
// sheet and the navigation bar that the pages of transport/webpages and
// the account pages of transport/auth share, so a user moving between them
// never changes site.
package webstyle

import "html/template"

// CSS is the style sheet, inlined in every page (the pages' Content
// Security Policy allows inline styles and no other origin).
const CSS template.CSS = `
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:0 1rem 3rem;color:#222;background:#fafafa}
nav{display:flex;gap:1rem;align-items:center;padding:.6rem 0;border-bottom:1px solid #ddd;margin-bottom:1rem;flex-wrap:wrap}
nav .brand{font-weight:700;margin-right:auto;color:#222;text-decoration:none}
nav form{margin:0}
a{color:#0b5cad}
h1{font-size:1.6rem;margin:.5rem 0}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .4rem}
table{border-collapse:collapse;width:100%;background:#fff}td,th{border-bottom:1px solid #e3e3e3;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{font-weight:600;color:#555}th .hint{display:block;font-weight:400}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.errors,.error{background:#fee;border:1px solid #c33;padding:.5rem 1rem;border-radius:4px}.errors p{margin:.3rem 0}
.warning{background:#fff6dd;border:1px solid #d9a400;padding:.5rem 1rem;border-radius:4px}
.secret{background:#efe;border:1px solid #3a3;padding:.5rem 1rem;border-radius:4px}
.status{display:inline-block;padding:.15rem .6rem;border-radius:1rem;background:#e8eef7;font-weight:600;white-space:nowrap}
.status.done{background:#dff3df;color:#1d5e1d}.status.error{background:#fde2e2;color:#8a1f1f}
.head{display:flex;gap:1rem;align-items:flex-start}.head img{border-radius:4px;border:1px solid #ddd}
.chapter-image{object-fit:cover;border-radius:3px;vertical-align:middle}
.waveform,.chart{width:100%;background:#fff;border:1px solid #ddd;border-radius:4px}
.waveform{max-height:160px}
.legend span{display:inline-block;width:1.2rem;height:.25rem;vertical-align:middle;margin:0 .3rem 0 .8rem}
audio{width:100%;margin:.5rem 0}
label{display:block;margin:.5rem 0 .1rem;font-weight:600}
input[type=text],input[type=url],input[type=password],input[type=date],textarea,select{width:100%;max-width:34rem;padding:.3rem;box-sizing:border-box;font:inherit}
code{word-break:break-all}
.field-error{color:#a11;font-size:.9rem}
fieldset{border:1px solid #ddd;border-radius:4px;margin:.8rem 0;background:#fff}
.check{font-weight:600}.check input{margin-right:.4rem}
.hint{color:#666;font-size:.88rem;margin:0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:0 1rem}
button{font:inherit;padding:.4rem 1rem;border-radius:4px;border:1px solid #0b5cad;background:#0b5cad;color:#fff;cursor:pointer}
button.secondary,nav button{background:#fff;color:#0b5cad}
.actions{display:flex;gap:.6rem;margin:1rem 0;align-items:center;flex-wrap:wrap}
progress{width:100%;max-width:34rem;height:1.2rem}
.progress-line{display:flex;gap:.6rem;align-items:center}.progress-line progress{flex:1}
.legend{margin:.3rem 0 .8rem}
.pager{display:flex;gap:1rem;margin:1rem 0}
.hero{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1rem 1.5rem;margin:1rem 0}
`

// Links are the destinations of the navigation bar; empty ones are left
// out.
type Links struct {
	Home, Productions, Upload, Services, Account, Login string
	// User is the logged-in user's name; Logout posts to LogoutURL with
	// CSRF when set.
	User, LogoutURL, CSRF string
}

// Nav is the navigation bar: the brand, the productions list, a new
// production, the external services, and the account (or a login link).
const Nav = `{{define "nav"}}<nav><a class="brand" href="{{.Home}}">audiopost</a>` +
	`{{if .Productions}}<a href="{{.Productions}}">Productions</a>{{end}}` +
	`{{if .Upload}}<a href="{{.Upload}}">New production</a>{{end}}` +
	`{{if .Services}}<a href="{{.Services}}">Services</a>{{end}}` +
	`{{if .Account}}<a href="{{.Account}}">Account{{if .User}} ({{.User}}){{end}}</a>{{else if .User}}<span>{{.User}}</span>{{end}}` +
	`{{if .LogoutURL}}<form method="post" action="{{.LogoutURL}}"><input type="hidden" name="csrf_token" value="{{.CSRF}}"><button>Log out</button></form>{{end}}` +
	`{{if .Login}}<a href="{{.Login}}">Log in</a>{{end}}</nav>{{end}}`
