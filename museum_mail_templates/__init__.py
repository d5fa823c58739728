"""The shipped English templates of the mails the service sends (string.Template files,
`$name` placeholders): museum_mail reads them, and a museum's `[mail] templates` directory
replaces any of them by name."""
