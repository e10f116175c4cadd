package webpages

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/audiopost/audiopost/production"
)

// listPageSize is how many productions the list page shows at once.
const listPageSize = 20

// listView is the productions list page.
type listView struct {
	Rows     []listRow
	Prev     string
	Next     string
	Page     int
	Empty    bool
	NewURL   string
	Presets  string
	Accounts string
}

type listRow struct {
	Title, StatusURL, Created, Length, Loudness, Peak string
	Status                                            int
	StatusString                                      string
	// Progress is the percentage done while a worker processes it.
	Progress               string
	Download, DownloadName string
}

// listPage serves GET {base}/productions/: the user's productions, newest
// first, listPageSize a page (?page=N).
func (pg *pages) listPage(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	// One more than shown tells whether there is a next page.
	ps, err := pg.app.ListProductions(r.Context(), pr.user, listPageSize+1, (page-1)*listPageSize)
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	lv := &listView{Page: page, NewURL: pg.link(pr, pg.prefix+"/upload/")}
	for i, p := range ps {
		if i == listPageSize {
			lv.Next = pg.link(pr, pg.prefix+"/productions/?page="+strconv.Itoa(page+1))
			break
		}
		lv.Rows = append(lv.Rows, pg.listRowOf(pr, p))
	}
	if page > 1 {
		lv.Prev = pg.link(pr, pg.prefix+"/productions/?page="+strconv.Itoa(page-1))
	}
	lv.Empty = len(lv.Rows) == 0 && page == 1
	d := pg.data(pr, "Productions")
	d.List = lv
	pg.render(w, r, pr, http.StatusOK, "list", d)
}

func (pg *pages) listRowOf(pr *pageReq, p *production.Production) listRow {
	v := pg.cfg.ProductionView(p)
	row := listRow{
		Title: v.Metadata.Title, StatusURL: pg.statusURL(pr, v.UUID),
		Status: int(v.Status), StatusString: v.Status.String(),
		Created: v.CreationTime.UTC().Format("2006-01-02 15:04"),
	}
	if v.Status.Processing() {
		row.Progress = strconv.Itoa(production.ShownProgress(v.Status, v.Progress)) + " %"
	}
	if row.Title == "" {
		row.Title = v.InputFile
	}
	if row.Title == "" {
		row.Title = "Untitled production"
	}
	if v.Length > 0 {
		row.Length = production.FormatTimestamp(time.Duration(math.Round(v.Length)) * time.Second)
	}
	if lv := v.Statistics.Levels; lv != nil {
		row.Loudness = levelText(lv.Output.Loudness)
		row.Peak = levelText(lv.Output.Peak)
	} else if m := v.Statistics.Master; m != nil {
		row.Loudness = levelText(m.Levels.Loudness)
		row.Peak = levelText(m.Levels.Peak)
	}
	for i, o := range v.OutputFiles {
		if o.DownloadURL != "" {
			row.Download, row.DownloadName = pg.fileLink(pr, o.DownloadURL), v.OutputFilename(i)
			break
		}
	}
	return row
}

// levelText shows a statistics value with its unit, or nothing.
func levelText(l production.Level) string {
	if l.Unit == "" || math.IsInf(l.Value, 0) || math.IsNaN(l.Value) {
		return ""
	}
	return strconv.FormatFloat(l.Value, 'f', 1, 64) + " " + l.Unit
}

// homeView is the front page.
type homeView struct {
	Login string
}

// home serves GET {base}/: a logged-in browser goes on to its productions;
// anyone else sees what the service does and how to get in.
func (pg *pages) home(w http.ResponseWriter, r *http.Request) {
	if _, ok := pg.auth.BrowserUser(r); ok {
		http.Redirect(w, r, pg.prefix+"/productions/", http.StatusSeeOther)
		return
	}
	pr := &pageReq{nonce: newNonce()}
	d := pg.data(pr, "Automatic audio post-production")
	d.Nav.Account = ""
	d.Nav.Login = pg.auth.LoginURL(pg.prefix + "/productions/")
	d.Home = &homeView{Login: d.Nav.Login}
	pg.render(w, r, pr, http.StatusOK, "home", d)
}
