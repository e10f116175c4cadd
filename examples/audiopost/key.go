package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func init() {
	register("key", "manage API keys: key create|list|revoke [-data DIR] -user U ...", runKey)
}

var keyVerbs = map[string]acctVerb{
	"create": {"create [-data DIR] -user U -name N [-expires 720h]", keyCreate},
	"list":   {"list [-data DIR] -user U", keyList},
	"revoke": {"revoke [-data DIR] -user U ID", keyRevoke},
}

func runKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return acctDispatch(ctx, "key", keyVerbs, []string{"create", "list", "revoke"}, args, stdout, stderr)
}

// keyCreate prints only the secret on stdout, so that scripts can capture
// it (KEY=$(audiopost key create ...)); the description goes to stderr.
func keyCreate(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username of the key's owner")
	name := fs.String("name", "", "name of the key, e.g. the application using it")
	expires := fs.Duration("expires", 0, "lifetime of the key, e.g. 720h (0: never expires)")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *user == "" || *name == "" || *expires < 0 {
		fs.Usage()
		return errors.New("key create needs -user, -name and a non-negative -expires")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := a.UserByName(ctx, *user)
	if err != nil {
		return err
	}
	var exp time.Time
	if *expires > 0 {
		exp = time.Now().Add(*expires)
	}
	k, secret, err := a.CreateAPIKey(ctx, u, *name, exp)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "API key %s (%q) of %s, expires %s. It is shown only now:\n", k.ID, k.Name, *user, acctTime(k.Expires, "never"))
	fmt.Fprintln(stdout, secret)
	return nil
}

func keyList(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username")
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if *user == "" {
		fs.Usage()
		return errors.New("key list needs -user")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := a.UserByName(ctx, *user)
	if err != nil {
		return err
	}
	keys, err := a.ListAPIKeys(ctx, u)
	if err != nil {
		return err
	}
	now := time.Now()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCREATED\tLAST USED\tEXPIRES\tSTATE")
	for _, k := range keys {
		state := "active"
		switch {
		case k.Revoked:
			state = "revoked"
		case !k.Expires.IsZero() && !now.Before(k.Expires):
			state = "expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, acctTime(k.Created, ""),
			acctTime(k.LastUsed, "never"), acctTime(k.Expires, "never"), state)
	}
	return tw.Flush()
}

func keyRevoke(ctx context.Context, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	loc := acctFlags(fs)
	user := fs.String("user", "", "username of the key's owner")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *user == "" || len(pos) != 1 {
		fs.Usage()
		return errors.New("key revoke needs -user and one key ID")
	}
	a, st, err := acctApp(ctx, fs, loc)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := a.UserByName(ctx, *user)
	if err != nil {
		return err
	}
	if err := a.RevokeAPIKey(ctx, u, pos[0]); err != nil {
		return fmt.Errorf("revoke key %s of %s: %w", pos[0], *user, err)
	}
	fmt.Fprintf(stdout, "revoked key %s\n", pos[0])
	return nil
}
