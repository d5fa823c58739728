"""The shipped templates of the mails the service sends (string.Template files, `$name`
placeholders), one directory per language of [museum] language (en, de): museum_mail reads
them, and a museum's `[mail] templates` directory replaces any of them by name."""
