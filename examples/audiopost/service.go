package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/outbound"
)

func init() {
	register("service", "manage users' external services: service add|ls|test|rm [-data DIR] -user U ...", runService)
}

// Secret key of service credentials. Stored services keep their
// credentials (username, password, private_key, access_key, secret_key)
// sealed with AES-256-GCM under one key, which serve and the service
// subcommand find in this order:
//
//  1. AUDIOPOST_SECRET_KEY: the key itself, 32 bytes in base64 or hex
//     (`openssl rand -base64 32`);
//  2. -secret-key-file FILE, or AUDIOPOST_SECRET_KEY_FILE: a file holding
//     it (for example a mounted secret);
//  3. with an SQLite store: secret.key next to the database file
//     (<data>/secret.key by default), created with mode 0600 on first
//     start. It protects the credentials in the database and its dumps,
//     not from someone who can read the data directory: keep the key
//     elsewhere (1 or 2) for that, and back it up, since credentials
//     sealed with a lost key must be entered again;
//  4. with PostgreSQL: nothing is generated, since processes on several
//     machines must share one key: give it with 1 or 2, or services with
//     credentials are refused (503 credentials_unavailable).
//
// At start, serve refuses a key other than the one that sealed the
// stored credentials, and seals credentials it finds in clear text.
const (
	envSecretKey     = "AUDIOPOST_SECRET_KEY"
	envSecretKeyFile = "AUDIOPOST_SECRET_KEY_FILE"
	secretKeyName    = "secret.key"
)

// secretKeyFlag defines -secret-key-file on fs.
func secretKeyFlag(fs *flag.FlagSet) *string {
	return fs.String("secret-key-file", os.Getenv(envSecretKeyFile),
		"file holding the key that seals service credentials (env "+envSecretKeyFile+"; or the key itself in "+envSecretKey+
			"; default with SQLite: "+secretKeyName+" beside the database, created on first use)")
}

// sqlitePath is the database file of an SQLite DSN as sqlstore.Open
// takes it; "" for PostgreSQL and in-memory databases.
func sqlitePath(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return ""
	}
	dsn = strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
	path, _, _ := strings.Cut(dsn, "?")
	if path == ":memory:" {
		return ""
	}
	return path
}

// loadSecretKey finds the key of service credentials for the store dsn
// names (see above). It returns nil without error when there is none,
// and says where the key came from.
func loadSecretKey(dsn, keyFile string) (k *storage.SecretKey, source string, created bool, err error) {
	text := os.Getenv(envSecretKey)
	switch {
	case text != "" && keyFile != "":
		return nil, "", false, fmt.Errorf("both %s and a secret key file (%s) are set; give one", envSecretKey, keyFile)
	case text != "":
		k, err := storage.ParseSecretKey(text)
		if err != nil {
			return nil, "", false, fmt.Errorf("%s: %w", envSecretKey, err)
		}
		return k, envSecretKey, false, nil
	case keyFile != "":
		k, err := storage.ReadSecretKeyFile(keyFile)
		return k, keyFile, false, err
	}
	db := sqlitePath(dsn)
	if db == "" {
		return nil, "", false, nil
	}
	path := filepath.Join(filepath.Dir(db), secretKeyName)
	k, created, err = storage.EnsureSecretKeyFile(path)
	return k, path, created, err
}

// useSecretKey gives the store its key and checks it against the
// credentials already sealed: a process with another key (or none) would
// fail at the first service it reads, so it fails at once instead.
func useSecretKey(ctx context.Context, st *sqlstore.Store, dsn, keyFile string, log *slog.Logger, stdout io.Writer) error {
	k, source, created, err := loadSecretKey(dsn, keyFile)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(stdout, "created the key that seals service credentials: %s (back it up; credentials sealed with a lost key must be entered again)\n", source)
	}
	st.SetSecretKey(k)
	ids, err := st.SecretKeyIDs(ctx)
	if err != nil {
		return err
	}
	for id, n := range ids {
		switch {
		case k == nil:
			return fmt.Errorf("%d service(s) have credentials sealed with key %s, and no key is configured: set %s or %s", n, id, envSecretKey, envSecretKeyFile)
		case id != k.ID():
			return fmt.Errorf("%d service(s) have credentials sealed with key %s, but the key from %s is %s", n, id, source, k.ID())
		}
	}
	n, err := st.SealPlainCredentials(ctx)
	switch {
	case err != nil:
		return err
	case n > 0 && k == nil:
		log.Warn("services keep credentials in clear text; configure a secret key to seal them", "services", n)
	case n > 0:
		log.Info("sealed the clear-text credentials of services", "services", n)
	}
	if k != nil {
		log.Debug("service credentials", "key", k.ID(), "from", source)
	} else {
		log.Warn("no secret key for service credentials: services with credentials are refused; set " + envSecretKey + " or " + envSecretKeyFile)
	}
	return nil
}

const serviceAddUsage = "add [-data DIR] -user U -type ftp|sftp|webdav|s3|pocketsphinx|whisper|openai [-name N] [-incoming=false] [-outgoing=false] [-no-test] -set key=value... [-set-file key=FILE]"

var serviceVerbs = map[string]acctVerb{
	"add":  {serviceAddUsage, serviceAdd},
	"ls":   {"ls [-data DIR] -user U", serviceList},
	"test": {"test [-data DIR] -user U UUID", serviceTest},
	"rm":   {"rm [-data DIR] -user U UUID", serviceRemove},
}

func runService(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return acctDispatch(ctx, "service", serviceVerbs, []string{"add", "ls", "test", "rm"}, args, stdout, stderr)
}

// serviceFlags are the flags every service verb has.
type serviceFlags struct {
	loc          acctLoc
	user         *string
	keyFile      *string
	allowPrivate *bool
}

func newServiceFlags(fs *flag.FlagSet) serviceFlags {
	return serviceFlags{loc: acctFlags(fs), user: fs.String("user", "", "username of the service's owner"),
		keyFile:      secretKeyFlag(fs),
		allowPrivate: fs.Bool("allow-private-fetch", false, "let the connection test reach loopback and private addresses (as serve -allow-private-fetch)")}
}

// open opens the store with its secret key and returns the application
// layer's operations over it (connecting as serve does), the user and
// the store to close.
func (f serviceFlags) open(ctx context.Context, fs *flag.FlagSet, stdout io.Writer) (*app.App, storage.User, *sqlstore.Store, error) {
	if *f.user == "" {
		fs.Usage()
		return nil, storage.User{}, nil, errors.New("-user is required")
	}
	st, err := acctOpen(ctx, fs, f.loc)
	if err != nil {
		return nil, storage.User{}, nil, err
	}
	dsn := *f.loc.db
	if dsn == "" {
		dsn = filepath.Join(*f.loc.data, sqlstore.DataDirDB)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := useSecretKey(ctx, st, dsn, *f.keyFile, quiet, stdout); err != nil {
		st.Close()
		return nil, storage.User{}, nil, err
	}
	a, err := app.New(app.Config{Store: st, Transfer: f.transferOptions()})
	if err != nil {
		st.Close()
		return nil, storage.User{}, nil, err
	}
	u, err := a.UserByName(ctx, *f.user)
	if err != nil {
		st.Close()
		return nil, storage.User{}, nil, err
	}
	return a, u, st, nil
}

// transferOptions connect as serve does: private and loopback addresses
// only when allowed.
func (f serviceFlags) transferOptions() transfer.Options {
	dial := outbound.New(outbound.Config{AllowLoopback: *f.allowPrivate, AllowPrivate: *f.allowPrivate, Timeout: -1})
	return transfer.Options{Dial: dial.DialContext, HTTPClient: dial.HTTPClient()}
}

// settingFlags collects repeated -set key=value and -set-file key=FILE.
type settingFlags struct {
	m        map[string]any
	fromFile bool
}

func (s *settingFlags) String() string { return "" }

func (s *settingFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	if s.fromFile {
		b, err := os.ReadFile(val)
		if err != nil {
			return err
		}
		val = string(b)
		if k != "private_key" {
			val = strings.TrimRight(val, "\r\n")
		}
	}
	if _, dup := s.m[k]; dup {
		return fmt.Errorf("%s is set twice", k)
	}
	s.m[k] = val
	return nil
}

func serviceAdd(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	f := newServiceFlags(fs)
	typ := fs.String("type", "", "service type: "+strings.Join(services.TypeNames(), ", "))
	name := fs.String("name", "", "display name (default: the type and the host, URL host or bucket)")
	incoming := fs.Bool("incoming", true, "input files may be read from it (not for speech recognizers)")
	outgoing := fs.Bool("outgoing", true, "outputs may be copied to it (not for speech recognizers)")
	noTest := fs.Bool("no-test", false, "save without connecting first")
	settings := map[string]any{}
	fs.Var(&settingFlags{m: settings}, "set", "a setting of the type, key=value (repeatable); the keys are in the info/service_types API call and the list below")
	fs.Var(&settingFlags{m: settings, fromFile: true}, "set-file", "a setting read from a file, key=FILE (repeatable), e.g. private_key=id_ed25519 or password=pw.txt, so the secret stays out of the command line")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: audiopost service %s\n", serviceAddUsage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "\nsettings by type (* required):")
		for _, t := range services.Types() {
			var ps []string
			for _, p := range t.Parameters {
				s := p.Name
				if p.Required {
					s += "*"
				}
				ps = append(ps, s)
			}
			fmt.Fprintf(stderr, "  %-7s %s\n", t.Name, strings.Join(ps, " "))
		}
	}
	if pos, err := parseInterleaved(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		fs.Usage()
		return fmt.Errorf("service add takes no arguments, got %q (settings go in -set key=value)", pos)
	}
	if *typ == "" {
		fs.Usage()
		return errors.New("service add needs -type")
	}
	speech := services.IsSpeech(*typ)
	if speech {
		// A recognizer holds no files.
		*incoming, *outgoing = false, false
	} else if !*incoming && !*outgoing {
		return errors.New("a service is incoming, outgoing or both")
	}
	a, u, st, err := f.open(ctx, fs, stdout)
	if err != nil {
		return err
	}
	defer st.Close()
	test := !*noTest
	svc, err := a.CreateService(ctx, u, &app.ServiceInput{Type: typ, DisplayName: name, Incoming: incoming, Outgoing: outgoing,
		Test: &test, Settings: settings})
	var te *app.TestError
	switch {
	case errors.As(err, &te):
		return fmt.Errorf("%w; -no-test saves anyway", te)
	case err != nil:
		return settingsErr(err)
	}
	switch {
	case !test:
	case speech:
		fmt.Fprintln(stderr, "the recognizer is available")
	default:
		fmt.Fprintln(stderr, "connected: the server accepted the login and listed the directory")
	}
	fmt.Fprintf(stdout, "added service %s (%s, %q) for %s\n", svc.UUID, svc.Type, svc.DisplayName, *f.user)
	return nil
}

// settingsErr lists every bad setting, one per line.
func settingsErr(err error) error {
	var fe production.FieldErrors
	if !errors.As(err, &fe) {
		return err
	}
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(fe)) {
		lines = append(lines, fmt.Sprintf("  %s: %s", k, fe[k]))
	}
	return fmt.Errorf("bad settings:\n%s", strings.Join(lines, "\n"))
}

func serviceList(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	f := newServiceFlags(fs)
	if pos, err := parseInterleaved(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("service ls takes no arguments, got %q", pos)
	}
	a, u, st, err := f.open(ctx, fs, stdout)
	if err != nil {
		return err
	}
	defer st.Close()
	svcs, err := a.ListServices(ctx, u)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UUID\tTYPE\tNAME\tDIRECTION\tSETTINGS")
	for _, s := range svcs {
		pub := services.PublicSettings(s)
		var shown []string
		for _, k := range slices.Sorted(maps.Keys(pub)) {
			shown = append(shown, k+"="+fmt.Sprint(pub[k]))
		}
		for _, k := range services.CredentialsSet(s) {
			shown = append(shown, k+" set") // credentials are never shown
		}
		dir := map[[2]bool]string{{true, true}: "in+out", {true, false}: "in", {false, true}: "out"}[[2]bool{s.Incoming, s.Outgoing}]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.UUID, s.Type, s.DisplayName, dir, strings.Join(shown, " "))
	}
	return tw.Flush()
}

// oneService parses the UUID argument of test and rm.
func oneService(fs *flag.FlagSet, verb string, args []string) (string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", fmt.Errorf("service %s needs one service UUID", verb)
	}
	return pos[0], nil
}

func serviceTest(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	f := newServiceFlags(fs)
	id, err := oneService(fs, "test", args)
	if err != nil {
		return err
	}
	a, u, st, err := f.open(ctx, fs, stdout)
	if err != nil {
		return err
	}
	defer st.Close()
	_, entries, err := a.TestService(ctx, u, id)
	if err != nil {
		return fmt.Errorf("service %s of %s: %w", id, *f.user, err)
	}
	fmt.Fprintf(stdout, "ok: %d file(s)\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(stdout, "%s\t%d\n", e.Name, e.Size)
	}
	return nil
}

func serviceRemove(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	f := newServiceFlags(fs)
	id, err := oneService(fs, "rm", args)
	if err != nil {
		return err
	}
	a, u, st, err := f.open(ctx, fs, stdout)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := a.DeleteService(ctx, u, id); err != nil {
		return fmt.Errorf("remove service %s of %s: %w", id, *f.user, err)
	}
	fmt.Fprintf(stdout, "removed service %s\n", id)
	return nil
}
