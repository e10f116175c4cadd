package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

func init() {
	register("user", "manage accounts: user add|list|passwd|credits [-data DIR] ...", runUser)
}

// acctVerb is one verb of the user, key and client subcommands.
type acctVerb struct {
	usage string
	run   func(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error
}

// acctDispatch runs "audiopost <cmd> <verb> [flags] [args]". Flags and
// positional arguments may come in any order ("key revoke ID -data DIR").
func acctDispatch(ctx context.Context, cmd string, verbs map[string]acctVerb, order []string, args []string, stdout, stderr io.Writer) error {
	usage := func() {
		fmt.Fprintf(stderr, "usage:\n")
		for _, v := range order {
			fmt.Fprintf(stderr, "  audiopost %s %s\n", cmd, verbs[v].usage)
		}
	}
	if len(args) == 0 {
		usage()
		return fmt.Errorf("%s needs a verb: %s", cmd, strings.Join(order, ", "))
	}
	v, ok := verbs[args[0]]
	if !ok {
		usage()
		if args[0] == "-h" || args[0] == "help" || args[0] == "--help" {
			return nil
		}
		return fmt.Errorf("unknown %s verb %q", cmd, args[0])
	}
	fs := flag.NewFlagSet(cmd+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: audiopost %s %s\n", cmd, v.usage)
		fs.PrintDefaults()
	}
	err := v.run(ctx, fs, args[1:], stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// parseInterleaved parses flags that may come before, between or after
// the positional arguments ("process in.wav -o out.mp3"), and returns the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// acctLoc is where the account commands find the store: the data
// directory of the embedded deployment, or -db as serve takes it.
type acctLoc struct{ data, db *string }

// acctFlags defines -data and -db on fs.
func acctFlags(fs *flag.FlagSet) acctLoc {
	return acctLoc{
		data: fs.String("data", "", "data directory of the embedded deployment (its SQLite database; default "+defaultData+", as serve, when it exists)"),
		db:   fs.String("db", "", "the store serve was given with -db (an SQLite file or postgres://...), instead of -data"),
	}
}

// acctOpen opens the store that -db or -data names, or serve's default
// data directory when it exists here. A missing default is an error, not a
// new empty store: an account made in the wrong folder helps nobody.
func acctOpen(ctx context.Context, fs *flag.FlagSet, loc acctLoc) (*sqlstore.Store, error) {
	if *loc.db == "" && *loc.data == "" {
		if fi, err := os.Stat(defaultData); err == nil && fi.IsDir() {
			*loc.data = defaultData
		}
	}
	switch {
	case *loc.db != "":
		return sqlstore.Open(ctx, *loc.db)
	case *loc.data != "":
		d, err := sqlstore.OpenDataDir(ctx, *loc.data)
		if err != nil {
			return nil, err
		}
		d.Blobs.Close()
		return d.Store, nil
	}
	fs.Usage()
	return nil, errors.New("no " + defaultData + " here (start serve in this folder first) and no -data DIR or -db URL given")
}

// acctApp opens the store that -db or -data names (acctOpen) and returns
// the application layer's operations over it, which the API calls too,
// and the store to close.
func acctApp(ctx context.Context, fs *flag.FlagSet, loc acctLoc) (*app.App, *sqlstore.Store, error) {
	st, err := acctOpen(ctx, fs, loc)
	if err != nil {
		return nil, nil, err
	}
	a, err := app.New(app.Config{Store: st, PasswordIterations: passwordIterations})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return a, st, nil
}

// acctUser resolves a username to the user; "" is the zero User (the
// operator, for OAuth clients).
func acctUser(ctx context.Context, a *app.App, username string) (storage.User, error) {
	if username == "" {
		return storage.User{}, nil
	}
	return a.UserByName(ctx, username)
}

func acctTime(t time.Time, zero string) string {
	if t.IsZero() {
		return zero
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

var userVerbs = map[string]acctVerb{
	"add":     {"add [-data DIR] -username U [-email E] -password P", userAdd},
	"list":    {"list [-data DIR]", userList},
	"passwd":  {"passwd [-data DIR] -username U -password P", userPasswd},
	"credits": {"credits [-data DIR] -username U -add 10h [-recurring]", userCredits},
}

func runUser(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return acctDispatch(ctx, "user", userVerbs, []string{"add", "list", "passwd", "credits"}, args, stdout, stderr)
}

// userCredits grants processing time, for servers that enforce credits
// (serve -credits); it prints the balance either way.
func userCredits(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	username := fs.String("username", "", "username")
	add := fs.Duration("add", 0, "processing time to grant, e.g. 10h or 90m (negative takes away; 0 shows the balance)")
	recurring := fs.Bool("recurring", false, "grant recurring rather than one-time credits")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *username == "" {
		fs.Usage()
		return errors.New("user credits needs -username")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := a.UserByName(ctx, *username)
	if err != nil {
		return err
	}
	if *add != 0 {
		onetime, rec := *add, time.Duration(0)
		if *recurring {
			onetime, rec = 0, *add
		}
		if u, err = a.AddCredits(ctx, u, onetime, rec); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s has %s of credits (%s one-time, %s recurring)\n", u.Username,
		hours(u.Credits()), hours(u.OnetimeCredits), hours(u.RecurringCredits))
	return nil
}

// hours writes a duration as hours with two decimals.
func hours(d time.Duration) string { return fmt.Sprintf("%.2f h", d.Hours()) }

func userAdd(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	username := fs.String("username", "", "username (letters, digits, . _ + -)")
	email := fs.String("email", "", "email address (optional)")
	password := fs.String("password", "", "password, at least 8 characters")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *username == "" || *password == "" {
		fs.Usage()
		return errors.New("user add needs -username and -password")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := a.CreateUser(ctx, *username, *email, *password)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created user %s (id %s)\n", u.Username, u.ID)
	return nil
}

func userList(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USERNAME\tEMAIL\tID\tJOINED\tCREDITS")
	const page = 200
	for off := 0; ; off += page {
		us, err := a.ListUsers(ctx, page, off)
		if err != nil {
			return err
		}
		for _, u := range us {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", u.Username, u.Email, u.ID, acctTime(u.Joined, ""), hours(u.Credits()))
		}
		if len(us) < page {
			break
		}
	}
	return tw.Flush()
}

func userPasswd(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	username := fs.String("username", "", "username")
	password := fs.String("password", "", "new password, at least 8 characters")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *username == "" || *password == "" {
		fs.Usage()
		return errors.New("user passwd needs -username and -password")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := a.SetPassword(ctx, *username, *password); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "password of %s changed\n", *username)
	return nil
}
