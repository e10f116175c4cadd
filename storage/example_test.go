package storage_test

import (
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

// A new API key: the user sees the secret once, the store keeps its hash.
func ExampleHashToken() {
	secret := storage.NewToken()
	key := storage.APIKey{Name: "ci", Hash: storage.HashToken(secret)}
	// Later, authenticating a request that carries the secret:
	presented := secret
	fmt.Println(storage.EqualHash(key.Hash, storage.HashToken(presented)))
	// Output: true
}

func ExampleHashPassword() {
	hash, err := storage.HashPassword("correct horse battery staple")
	if err != nil {
		panic(err)
	}
	fmt.Println(storage.CheckPassword(hash, "Tr0ub4dor&3"))
	// Output: false
}

func ExampleValidKey() {
	for _, key := range []string{"productions/42/output.mp3", "../etc/passwd"} {
		fmt.Println(key, storage.ValidKey(key) == nil)
	}
	// Output:
	// productions/42/output.mp3 true
	// ../etc/passwd false
}
